/**
 * Runs the opcat CLI in-process from source (through tsx) with the image commands registered, so
 * tests can check exit codes and messages: `node --import tsx test/image/cli-harness.ts <args>`.
 */
import { CommanderError } from "commander";
import { buildProgram } from "../../src/cli/main.js";
import { registerImageCommands } from "../../src/cli/image.js";
import { EXIT_USAGE, handleError } from "../../src/cli/output.js";

const program = buildProgram();
if (!program.commands.some((c) => c.name() === "catalog")) registerImageCommands(program);
try {
  await program.parseAsync(process.argv.slice(2), { from: "user" });
} catch (e) {
  if (e instanceof CommanderError) process.exitCode = e.exitCode === 0 ? 0 : EXIT_USAGE;
  else process.exitCode = handleError(e, "text");
}
