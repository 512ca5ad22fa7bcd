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

test("no --help shows an argument without a description (list packages had an [unused] one)", () => {
  const offending: string[] = [];
  const visit = (cmd: Command, path: string[]): void => {
    for (const a of (cmd as unknown as { registeredArguments: { name(): string; description: string }[] })
      .registeredArguments)
      if (!a.description) offending.push(`${[...path, cmd.name()].join(" ")} <${a.name()}>`);
    for (const sub of cmd.commands) visit(sub, [...path, cmd.name()]);
  };
  visit(buildProgram(), []);
  assert.deepEqual(offending, []);
  const help = all(buildProgram()).find((h) => h.path === "opcat list packages")?.help ?? "";
  assert.match(help, /^Usage: opcat list packages \[options\] <ref>$/m);
  assert.doesNotMatch(help, /unused/);
});
