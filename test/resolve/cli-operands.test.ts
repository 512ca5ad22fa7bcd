/** `opcat resolve`, `images` and `validate` on the seed 004 example (examples/resolve/operands), run from source. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../shared.js";

const EX = join(REPO_ROOT, "examples", "resolve", "operands");

function opcat(args: string[]): { code: number; stdout: string; stderr: string } {
  const script =
    `const m = await import(${JSON.stringify(join(REPO_ROOT, "src", "cli", "main.ts"))}); ` +
    `process.exitCode = await m.run(${JSON.stringify(args)});`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test("resolve names the chosen operand and related-image entries; images lists exactly what to mirror", () => {
  const r = opcat([
    "resolve",
    "--catalog",
    join(EX, "catalog"),
    "--catalog",
    `updates=${join(EX, "updates")}`,
    "--input",
    join(EX, "input.yaml"),
    "-o",
    "json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rs = JSON.parse(r.stdout) as { operands: { schema: string; name: string; version: string; catalog: string }[] };
  assert.deepEqual(
    rs.operands.map((o) => `${o.schema} ${o.name} ${o.version} (${o.catalog})`),
    [
      "olm.operand etcd 3.1.1 (catalog)",
      "olm.operand prometheus 2.9.0 (catalog)",
      "olm.relatedimages etcdoperator-related 0.9.1 (updates)",
    ],
  );
  const dir = mkdtempSync(join(tmpdir(), "opcat-operands-"));
  writeFileSync(join(dir, "rs.json"), r.stdout);
  const imgs = opcat(["images", "--resolveset", join(dir, "rs.json")]);
  assert.equal(imgs.code, 0, imgs.stderr);
  assert.equal(
    imgs.stdout,
    [
      "quay.io/coreos/etcd-operator:v0.9.1",
      "quay.io/coreos/etcd:v3.1.1",
      "quay.io/example/prometheus-operator:v1.0.0",
      "quay.io/operatorhubio/etcd:v0.6.1",
      "quay.io/prometheus/alertmanager:v0.17.0",
      "quay.io/prometheus/prometheus:v2.9.0",
      "",
    ].join("\n"),
  );
  const json = JSON.parse(opcat(["images", "--resolveset", join(dir, "rs.json"), "-o", "json"]).stdout) as {
    image: string;
    uses: unknown[];
  }[];
  assert.deepEqual(json.find((i) => i.image === "quay.io/prometheus/alertmanager:v0.17.0")?.uses, [
    { bundle: "", package: "", name: "alertmanager", schema: "olm.operand", entry: "prometheus 2.9.0" },
  ]);
});

test("images of a catalog include every entry; --package narrows to what a package can use", () => {
  const all = opcat(["images", "--catalog", join(EX, "catalog")]);
  assert.equal(all.code, 0, all.stderr);
  assert.equal(all.stdout.trim().split("\n").length, 2 + 5);
  const prom = opcat(["images", "--catalog", join(EX, "catalog"), "--package", "prometheus"]);
  assert.deepEqual(prom.stdout.trim().split("\n"), [
    "quay.io/example/prometheus-operator:v1.0.0",
    "quay.io/prometheus/alertmanager:v0.17.0",
    "quay.io/prometheus/prometheus:v2.9.0",
  ]);
});

test("an invalid olm.operand blob fails validation with its code and location (exit 1)", () => {
  const dir = mkdtempSync(join(tmpdir(), "opcat-operands-"));
  writeFileSync(join(dir, "catalog.yaml"), "schema: olm.operand\nname: etcd\nversion: 3.1\nimages: []\n");
  const v = opcat(["validate", dir]);
  assert.equal(v.code, 1);
  assert.match(v.stderr + v.stdout, /catalog\.yaml:1: error\[FBC_OPERAND_IMAGE_INVALID\]/);
  // YAML reads an unquoted 3.1 as a number.
  assert.match(
    v.stderr + v.stdout,
    new RegExp(
      /catalog\.yaml:1: error\[FBC_OPERAND_VERSION_INVALID\]: /.source +
        /olm\.operand "etcd": version must be a string, got a number/.source,
    ),
  );
  const r = opcat(["resolve", "--catalog", dir, "--input", join(EX, "input.yaml")]);
  assert.equal(r.code, 1);
});
