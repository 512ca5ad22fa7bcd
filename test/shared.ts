/**
 * Locating the real data in ../shared (never copied into the repository). Under CI=true a missing
 * directory is a failure; elsewhere the tests that need it are skipped with a message saying so.
 */
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const SHARED = process.env.OPCAT_SHARED ?? resolve(REPO_ROOT, "..", "shared");
export const COMMUNITY = join(SHARED, "data", "community");

/**
 * Returns `{ skip: false }` when `path` exists; otherwise throws under CI=true, or returns a
 * skip reason for node:test.
 */
export function requireShared(path: string = COMMUNITY): { skip: false | string } {
  if (existsSync(path)) return { skip: false };
  const msg = `real data not found at ${path} (set OPCAT_SHARED to the shared/ directory)`;
  if (process.env.CI === "true") throw new Error(`${msg}; under CI=true this is a failure`);
  return { skip: msg };
}

/** `<COMMUNITY>/catalogs/<version>/<pkg>/catalog.yaml` files of one catalog version, sorted. */
export function catalogFiles(version: string): { pkg: string; file: string }[] {
  const dir = join(COMMUNITY, "catalogs", version);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .map((pkg) => ({ pkg, file: join(dir, pkg, "catalog.yaml") }))
    .filter((f) => existsSync(f.file));
}

/**
 * Runs `fn` with standard output and error captured and returns the text written to them: how the
 * action tests check that an action prints nothing. Binary chunks are the test runner's own reports
 * (serialized to standard output while `fn` awaits) and are passed on.
 */
export async function silent<T>(fn: () => Promise<T>): Promise<{ value: T; written: string }> {
  const out = process.stdout.write;
  const err = process.stderr.write;
  let written = "";
  const capture = (orig: typeof process.stdout.write, stream: NodeJS.WriteStream) =>
    ((chunk: string | Uint8Array, ...rest: never[]): boolean => {
      if (typeof chunk !== "string") return orig.call(stream, chunk, ...rest);
      written += chunk;
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture(out, process.stdout);
  process.stderr.write = capture(err, process.stderr);
  try {
    return { value: await fn(), written };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

/**
 * mulberry32: a small seeded generator of numbers in [0, 1), for tests and benchmarks whose random
 * input must be replayable from its seed.
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
