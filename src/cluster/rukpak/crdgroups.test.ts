import { test } from "node:test";
import assert from "node:assert/strict";
import type { KubeObject } from "../kube/client.js";
import { CATALOG_GROUP } from "../catalogd/api.js";
import { DEPPY_GROUP } from "../deppy/api.js";
import { OLM_GROUP } from "../olm/api.js";
import { OPERATOR_GROUP } from "../operators/api.js";
import { GROUP } from "./api.js";
import { crdGroupProblem, groupKindOf, OPCAT_GROUPS, ownKinds, reservedGroup } from "./crdgroups.js";

const crd = (group: string, kind: string): KubeObject =>
  ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${kind.toLowerCase()}s.${group}` },
    spec: { group, names: { kind } },
  }) as unknown as KubeObject;

test("crdgroups: opcat's groups are the ones its APIs declare", () => {
  assert.deepEqual(
    [...new Set([GROUP, DEPPY_GROUP, OLM_GROUP, CATALOG_GROUP, OPERATOR_GROUP])].sort(),
    [...OPCAT_GROUPS].sort(),
  );
});

test("crdgroups (A6): CRDs in built-in, served or opcat's groups are refused and excuse no object", () => {
  for (const g of ["", "apps", "batch", "policy", "autoscaling", "rbac.authorization.k8s.io", "x.kubernetes.io"])
    assert.equal(reservedGroup(g), true, g);
  assert.equal(reservedGroup("example.com"), false);
  const served = new Set(["metrics.example.io"]);
  assert.match(crdGroupProblem(crd("rbac.authorization.k8s.io", "ClusterRoleBinding"), served) ?? "", /built-in/);
  assert.match(crdGroupProblem(crd("metrics.example.io", "Metric"), served) ?? "", /built-in/);
  assert.match(crdGroupProblem(crd("rukpak.io", "Instance"), served) ?? "", /opcat's own/);
  assert.equal(crdGroupProblem(crd("example.com", "Widget"), served), undefined);
  const objects = [
    crd("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    crd("apps", "Deployment"),
    crd("", "Secret"),
    crd("example.com", "Widget"),
  ];
  assert.deepEqual([...ownKinds(objects, served)], ["example.com/Widget"]);
  assert.equal(groupKindOf({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" } }), "/Secret");
});
