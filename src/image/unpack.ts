/**
 * Safe layer extraction: gzip/uncompressed tar layers applied in order onto a directory with OCI
 * whiteouts, refusing paths that leave the root, writes through symlinks and symlinks that point
 * outside it, within byte and entry budgets. Modes are forced to 0600 (files) and 0700 (directories),
 * as opm does.
 */
import {
  closeSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeSync,
  chmodSync,
  type Stats,
} from "node:fs";
import { join, posix } from "node:path";
import { PassThrough, pipeline, Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { ImageError, errText } from "./errors.js";
import { readTar } from "./tar.js";

export interface UnpackLimits {
  /** Total bytes of file content written over all layers (default 8 GiB). */
  maxBytes?: number;
  /** Total tar entries over all layers (default 1,000,000). */
  maxEntries?: number;
}

/** Running totals shared by the layers of one image. */
export interface UnpackBudget {
  bytes: number;
  entries: number;
}

export interface ApplyLayerOptions extends UnpackLimits {
  /**
   * Root-relative paths (e.g. "configs", "manifests"): only entries at or under them (and the
   * directories leading to them) are written. Undefined writes everything.
   */
  only?: readonly string[];
  /** Shown in error messages, e.g. the layer digest. */
  label?: string;
}

const DEFAULT_MAX_BYTES = 8 * 1024 ** 3;
const DEFAULT_MAX_ENTRIES = 1_000_000;

function unsafe(label: string, msg: string): ImageError {
  return new ImageError("IMAGE_UNSAFE_LAYER", `${label}: ${msg}`);
}

/**
 * The root-relative, cleaned form of a tar entry or link path ("" for the root); throws when ".."
 * would leave the root.
 */
export function cleanEntryPath(name: string, label = "layer"): string {
  const parts: string[] = [];
  for (const c of name.split("/")) {
    if (c === "" || c === ".") continue;
    if (c === "..") {
      if (parts.length === 0) throw unsafe(label, `entry ${JSON.stringify(name)} escapes the image root`);
      parts.pop();
      continue;
    }
    parts.push(c);
  }
  return parts.join("/");
}

function wanted(p: string, only: readonly string[] | undefined): "yes" | "parent" | "no" {
  if (!only) return "yes";
  for (const o of only) {
    if (o === "" || p === o || p.startsWith(o + "/")) return "yes";
  }
  for (const o of only) if (o.startsWith(p + "/")) return "parent";
  return "no";
}

function lstatOrUndef(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** Sniffs the compression of a layer stream and yields its uncompressed bytes. */
export async function* decompress(src: AsyncIterable<Buffer>, label = "layer"): AsyncGenerator<Buffer> {
  const it = src[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  let ended = false;
  while (head.length < 6) {
    const r = await it.next();
    if (r.done) {
      ended = true;
      break;
    }
    head = Buffer.concat([head, r.value]);
  }
  async function* rest(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    if (ended) return;
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      yield r.value;
    }
  }
  if (head[0] === 0x1f && head[1] === 0x8b) {
    const gunzip = createGunzip();
    const out = new PassThrough({ highWaterMark: 1 << 20 });
    pipeline(Readable.from(rest()), gunzip, out, () => undefined);
    try {
      for await (const c of out) yield c as Buffer;
    } catch (e) {
      if (e instanceof ImageError) throw e;
      throw new ImageError("IMAGE_LAYER_CORRUPT", `${label}: truncated or corrupt gzip stream: ${errText(e)}`, {
        cause: e,
      });
    }
    return;
  }
  if (head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd)
    throw new ImageError("IMAGE_LAYER_UNSUPPORTED", `${label}: zstd-compressed layers are not supported`);
  if (head[0] === 0xfd && head.subarray(1, 6).toString("latin1") === "7zXZ\0")
    throw new ImageError("IMAGE_LAYER_UNSUPPORTED", `${label}: xz-compressed layers are not supported`);
  if (head.subarray(0, 3).toString("latin1") === "BZh")
    throw new ImageError("IMAGE_LAYER_UNSUPPORTED", `${label}: bzip2-compressed layers are not supported`);
  yield* rest();
}

/**
 * Applies one layer (compressed or not) onto `root`. `created` collects the paths this layer wrote,
 * so that its own opaque whiteouts do not remove them; `budget` carries totals across layers.
 */
export async function applyLayer(
  root: string,
  src: AsyncIterable<Buffer>,
  budget: UnpackBudget,
  opts: ApplyLayerOptions = {},
): Promise<void> {
  const label = opts.label ?? "layer";
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxEntries = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const created = new Set<string>();
  /** Directories known to be real directories (not symlinks) under root in this run. */
  const safeDirs = new Set<string>([""]);

  const ensureDir = (rel: string): void => {
    if (safeDirs.has(rel)) return;
    const parent = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
    ensureDir(parent);
    const abs = join(root, rel);
    const st = lstatOrUndef(abs);
    if (st?.isSymbolicLink()) throw unsafe(label, `path ${JSON.stringify(rel)} goes through a symlink`);
    if (st && !st.isDirectory()) rmSync(abs, { force: true });
    if (!st?.isDirectory()) mkdirSync(abs, { mode: 0o700 });
    safeDirs.add(rel);
  };
  const forget = (rel: string): void => {
    for (const d of safeDirs) if (d === rel || d.startsWith(rel + "/")) safeDirs.delete(d);
  };
  const parentOf = (rel: string): string => (rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "");

  for await (const e of readTar(decompress(src, label))) {
    if (++budget.entries > maxEntries) throw unsafe(label, `image has more than ${maxEntries} entries`);
    const rel = cleanEntryPath(e.name, label);
    if (rel === "") continue;
    const base = posix.basename(rel);
    const dir = parentOf(rel);
    if (base.startsWith(".wh.")) {
      if (wanted(dir, opts.only) === "no") continue;
      ensureDir(dir);
      if (base === ".wh..wh..opq") {
        const abs = join(root, dir);
        for (const child of readdirSync(abs)) {
          const c = dir ? `${dir}/${child}` : child;
          if (created.has(c)) continue;
          rmSync(join(abs, child), { recursive: true, force: true });
          forget(c);
        }
      } else {
        const target = dir ? `${dir}/${base.slice(4)}` : base.slice(4);
        rmSync(join(root, target), { recursive: true, force: true });
        forget(target);
      }
      continue;
    }
    const w = wanted(rel, opts.only);
    if (w === "no" || (w === "parent" && e.type !== "dir")) continue;
    ensureDir(dir);
    const abs = join(root, rel);
    created.add(rel);
    if (e.type === "dir") {
      const st = lstatOrUndef(abs);
      if (st?.isDirectory()) chmodSync(abs, 0o700);
      else ensureDir(rel);
      continue;
    }
    const existing = lstatOrUndef(abs);
    if (existing) {
      rmSync(abs, { recursive: true, force: true });
      forget(rel);
    }
    if (e.type === "file") {
      const fd = openSync(abs, "wx", 0o600);
      try {
        for await (const c of e.body()) {
          budget.bytes += c.length;
          if (budget.bytes > maxBytes) throw unsafe(label, `image content exceeds ${maxBytes} bytes`);
          let off = 0;
          try {
            while (off < c.length) off += writeSync(fd, c, off);
          } catch (err) {
            // name the file (a full disk): write errors carry no path of their own
            const x = err as NodeJS.ErrnoException;
            if (x.path === undefined) x.path = abs;
            throw x;
          }
        }
      } finally {
        closeSync(fd);
      }
    } else if (e.type === "symlink") {
      let target = e.linkname;
      if (target === "") throw unsafe(label, `symlink ${JSON.stringify(rel)} has an empty target`);
      // In the image, an absolute target is relative to the image root: keep it inside this root.
      if (target.startsWith("/")) {
        const t = cleanEntryPath(target, label);
        target = posix.relative(dir || ".", t || ".") || ".";
      }
      const resolved = posix.normalize(posix.join(dir || ".", target));
      if (resolved === ".." || resolved.startsWith("../"))
        throw unsafe(
          label,
          `symlink ${JSON.stringify(rel)} -> ${JSON.stringify(e.linkname)} points outside the image root`,
        );
      symlinkSync(target, abs);
    } else if (e.type === "hardlink") {
      const t = cleanEntryPath(e.linkname, label);
      if (wanted(t, opts.only) !== "yes") continue;
      const tdir = parentOf(t);
      ensureDir(tdir);
      const st = lstatOrUndef(join(root, t));
      if (!st)
        throw unsafe(label, `hard link ${JSON.stringify(rel)} -> ${JSON.stringify(e.linkname)}: target not found`);
      if (!st.isFile())
        throw unsafe(
          label,
          `hard link ${JSON.stringify(rel)} -> ${JSON.stringify(e.linkname)}: target is not a regular file`,
        );
      linkSync(join(root, t), abs);
    }
    // devices, fifos and other special files are not created
  }
}
