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

/**
 * Runs a command; throws when it does not exit 0. stdout and
 * stderr are inherited unless `opts.stdio` says otherwise.
 */
export function runChecked(cmd: string, args: string[], opts: Parameters<typeof spawnSync>[2] = {}): Buffer {
  const r = spawnSync(cmd, args, { stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 30, ...opts });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}`);
  return r.stdout as Buffer;
}

/** The operator-registry git dir and commit opm is built from (scripts/oracle/opm/build-opm.sh). */
export const OPREG_GIT = process.env.OPREG_GIT ?? "/work/.mirror/operator-framework+operator-registry/repo";
export const OPREG_REF = process.env.OPREG_REF ?? "4f9d6f222b01aac84c52de7dbdaa6a289380a303";

/**
 * Exports operator-registry at OPREG_REF into `dir` (git archive of the mirror) with
 * go.podman.io/common pinned to v0.69.0 as build-opm.sh pins it (v0.69.1 is not on the Go module
 * proxy), so that Go code placed in the tree builds against opm's own packages and module versions.
 */
export function exportOperatorRegistry(dir: string): void {
  const archive = runChecked("git", ["--git-dir", OPREG_GIT, "archive", OPREG_REF]);
  runChecked("tar", ["-x", "-C", dir], { input: archive, stdio: ["pipe", "inherit", "inherit"] });
  runChecked("go", ["mod", "edit", "-replace", "go.podman.io/common=go.podman.io/common@v0.69.0"], { cwd: dir });
}

/** The build tags build-opm.sh builds opm with. */
export const OPM_TAGS = "json1,containers_image_openpgp";
