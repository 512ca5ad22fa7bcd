import { test } from "node:test";
import assert from "node:assert/strict";
import { constraintKind, ConstraintParseError, MAX_CONSTRAINT_SIZE, parseConstraint } from "./constraint.js";

test("olm.constraint values parse into the typed model", () => {
  assert.deepEqual(
    parseConstraint(
      '{"failureMessage":"needs etcd",' +
        '"gvk":{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}}',
    ),
    {
      failureMessage: "needs etcd",
      gvk: { group: "etcd.database.coreos.com", kind: "EtcdCluster", version: "v1beta2" },
    },
  );
  assert.deepEqual(parseConstraint('{"package":{"packageName":"etcd","versionRange":">=1.0.0"}}'), {
    package: { packageName: "etcd", versionRange: ">=1.0.0" },
  });
  assert.deepEqual(parseConstraint('{"cel":{"rule":"properties.exists(p, p.type == \\"olm.test\\")"}}').cel, {
    rule: 'properties.exists(p, p.type == "olm.test")',
  });
  const nested = parseConstraint(
    '{"all":{"constraints":[{"gvk":{"group":"g","kind":"K","version":"v1"}},{"not":' +
      '{"constraints":[{"package":{"packageName":"p","versionRange":"<1.0.0"}}]}}]}}',
  );
  assert.equal(nested.all?.constraints.length, 2);
  assert.deepEqual(nested.all?.constraints[1].not?.constraints[0].package, {
    packageName: "p",
    versionRange: "<1.0.0",
  });
  assert.deepEqual(constraintKind(nested), { kind: "all" });
  assert.ok("error" in constraintKind({}));
  assert.ok("error" in constraintKind({ cel: { rule: "true" }, gvk: { group: "", kind: "", version: "" } }));
});

test("olm.constraint errors read like constraints.Parse", () => {
  assert.throws(
    () => parseConstraint('{"arbitrary":{"x":1}}'),
    new ConstraintParseError('json: unknown field "arbitrary"'),
  );
  assert.throws(
    () => parseConstraint('{"cel":{"rule":5}}'),
    new ConstraintParseError("json: cannot unmarshal number into Go struct field Cel.cel.rule of type string"),
  );
  assert.throws(
    () => parseConstraint('{"all":{"constraints":{}}}'),
    new ConstraintParseError(
      "json: cannot unmarshal object into Go struct field " +
        "CompoundConstraint.all.constraints of type []constraints.Constraint",
    ),
  );
  assert.throws(
    () => parseConstraint('"x"'),
    new ConstraintParseError("json: cannot unmarshal string into Go value of type constraints.Constraint"),
  );
  assert.throws(
    () => parseConstraint(JSON.stringify({ cel: { rule: "x".repeat(MAX_CONSTRAINT_SIZE) } })),
    /greater than max constraint size 131072 bytes/,
  );
});
