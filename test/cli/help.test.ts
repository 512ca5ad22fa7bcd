/** --help speaks the user's language: it names features, never the project's seed documents. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Command } from "commander";
import { buildProgram } from "../../src/cli/main.js";

function all(cmd: Command, path: string[] = []): { path: string; help: string }[] {
  const out = [{ path: [...path, cmd.name()].join(" "), help: cmd.helpInformation() }];
  for (const sub of cmd.commands) out.push(...all(sub, [...path, cmd.name()]));
  return out;
}

test("no --help text mentions a seed document", () => {
  const helps = all(buildProgram());
  assert.ok(helps.length > 30, `${helps.length} commands`);
  const offending = helps.filter((h) => /\bseed\s*0\d\d\b/i.test(h.help)).map((h) => h.path);
  assert.deepEqual(offending, []);
});

test("the TLS flags of commands that push say so (not 'while pulling bundles')", () => {
  const helps = all(buildProgram());
  for (const path of ["opcat bundle build", "opcat catalog build"]) {
    const h = helps.find((x) => x.path === path);
    assert.ok(h, path);
    assert.doesNotMatch(h.help.replace(/\s+/g, " "), /while pulling bundles/, path);
    // catalog build also pulls its base image
    assert.match(
      h.help.replace(/\s+/g, " "),
      /--use-http use plain HTTP for container image registries while (pulling the base image and )?pushing the image/,
      path,
    );
  }
  // commands that pull keep opm's words
  assert.match(helps.find((x) => x.path === "opcat render")!.help.replace(/\s+/g, " "), /while pulling bundles/);
});
