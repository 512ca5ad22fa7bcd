/**
 * Commands load the library they need when they run, not when opcat starts: a command group's
 * modules are imported by commander's preAction hook, once, before the first action of the group
 * or of any of its subcommands. Defining commands (and `--help`, `--version`) loads nothing else.
 */
import type { Command } from "commander";

export function loadOnAction(cmds: Command[], load: () => Promise<void>): void {
  let done: Promise<void> | undefined;
  for (const c of cmds) c.hook("preAction", () => (done ??= load()));
}
