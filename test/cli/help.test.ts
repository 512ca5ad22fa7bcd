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
