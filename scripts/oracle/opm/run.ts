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

/**
 * The message of opm's fatal error on stderr: logrus's `time=… level=fatal msg="…"` (the message
 * Go-quoted) or the standard log package's `YYYY/MM/DD HH:MM:SS message`.
 */
export function fatalMessage(stderr: string): string {
  const last = stderr.trimEnd().split("\n").at(-1) ?? "";
  const logrus = /level=fatal msg=("(?:[^"\\]|\\.)*")/.exec(last);
  if (logrus) return unquoteGo(logrus[1]!);
  const std = /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d (.*)$/.exec(last);
  if (std) return std[1]!;
  throw new Error(`no fatal error message in ${JSON.stringify(stderr)}`);
}

/** strconv.Unquote of a double-quoted Go string literal (JSON escapes plus \a \b \f \v \xHH \ooo). */
function unquoteGo(q: string): string {
  const bytes: number[] = [];
  const body = q.slice(1, -1);
  const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, "\\": 92, '"': 34, "'": 39 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      bytes.push(...Buffer.from(c));
      continue;
    }
    const e = body[++i]!;
    if (e in simple) bytes.push(simple[e]!);
    else if (e === "x") {
      bytes.push(Number.parseInt(body.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (e === "u" || e === "U") {
      const n = e === "u" ? 4 : 8;
      bytes.push(...Buffer.from(String.fromCodePoint(Number.parseInt(body.slice(i + 1, i + 1 + n), 16))));
      i += n;
    } else {
      bytes.push(Number.parseInt(body.slice(i, i + 3), 8));
      i += 2;
    }
  }
  return Buffer.from(bytes).toString("utf8");
}
