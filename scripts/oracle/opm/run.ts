/** Shared by the generators that run the real opm binary (scripts/oracle/<name>/gen.ts). */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The opm binary: $OPM, else ~/.cache/opcat/opm/opm (scripts/oracle/opm/build-opm.sh builds it there). */
export const OPM = process.env.OPM ?? join(homedir(), ".cache", "opcat", "opm", "opm");

export interface OpmRun {
  status: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs opm with these arguments (stdin: `input`, if given), in `cwd`. */
export function runOpm(args: string[], opts: { input?: string | Buffer; cwd?: string } = {}): OpmRun {
  if (!existsSync(OPM)) throw new Error(`${OPM} not found: build it with scripts/oracle/opm/build-opm.sh or set OPM`);
  const r = spawnSync(OPM, args, {
    input: opts.input,
    cwd: opts.cwd,
    maxBuffer: 1 << 30,
    env: { ...process.env, HOME: process.env.HOME ?? homedir() },
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString("utf8") };
}

/**
 * Writes `bytes` to the golden file, or with --check on the command line compares them with its
 * committed bytes and exits 1 when they differ.
 */
export function checkOrWrite(file: URL | string, bytes: string | Buffer): void {
  const path = typeof file === "string" ? file : fileURLToPath(file);
  const want = Buffer.from(bytes);
  if (process.argv.includes("--check")) {
    const have = existsSync(path) ? readFileSync(path) : Buffer.alloc(0);
    if (have.equals(want)) console.log(`${path}: identical (${want.length} bytes)`);
    else {
      console.log(`${path}: DIFFERS (committed ${have.length} bytes, opm gives ${want.length})`);
      process.exitCode = 1;
    }
    return;
  }
  writeFileSync(path, want);
  console.log(`${path}: written (${want.length} bytes)`);
}
