// What every start of opcat sets up on its standard streams: bin/start.mjs (from dist/) and the start-up
// snapshot's main function (scripts/snapshot-entry.mjs). Must parse on old Node versions, as bin/start.mjs.
import { readlinkSync } from "node:fs";

/**
 * A closed pipe (e.g. `opcat render … | head`) ends the program quietly, as in other Unix tools; any
 * other failure to write the output (a full disk, an I/O error) is an I/O error: exit 2, never 0.
 */
export function quietPipes() {
  for (const [fd, stream] of [
    [1, process.stdout],
    [2, process.stderr],
  ]) {
    stream.on("error", (e) => {
      if (e && e.code === "EPIPE") process.exit(process.exitCode ?? 0);
      let where = fd === 1 ? "standard output" : "standard error";
      try {
        where += ` (${readlinkSync(`/proc/self/fd/${fd}`)})`;
      } catch {
        // no /proc: the stream's name is enough
      }
      try {
        process.stderr.write(
          `opcat: error[IO_WRITE]: writing ${where}: ${e?.code ?? "error"}: ` +
            `${String(e?.message ?? e).replace(/^[A-Z]+: /, "")}\n` +
            "  hint: free space on the target or write elsewhere; the output is incomplete\n",
        );
      } catch {
        // stderr itself failed
      }
      process.exit(2);
    });
  }
}
