/**
 * The worker thread of Deppy's resolution (resolverunner.ts): keeps the resolver's model of each
 * catalog revision it was given (by digest: its bytes, or the open file it reads them from a piece at a
 * time, slimming and loading each line as it goes) and answers one resolution per message, so that a long
 * resolution never blocks the controllers' event loop (admission webhooks, watches, other
 * controllers) and can be stopped when it runs out of its budget.
 */
import { readSync } from "node:fs";
import { parentPort } from "node:worker_threads";
import { loadText, type LoadResult } from "../../fbc/load.js";
import { emptyConfig } from "../../fbc/types.js";
import { validateCatalog, type ValidationResult } from "../../fbc/validate.js";
import type { Model } from "../../fbc/model.js";
import { CatalogSet, forEachSlimLineForResolution, resolve, type NamedCatalog } from "../../resolve/index.js";
import type { RunnerCatalog, RunnerFileRange, RunnerReply, RunnerRequest } from "./resolverunner.js";

const parts = new Map<string, Omit<NamedCatalog, "name" | "priority">>();
let setCache: { key: string; set: CatalogSet } | undefined;

parentPort?.on("message", (m: RunnerRequest) => {
  const reply = (r: RunnerReply) => parentPort?.postMessage(r);
  try {
    for (const c of m.catalogs) {
      if (parts.has(c.digest)) continue;
      // a line at a time (a revision's JSON Lines hold one blob each), without the bundle manifests
      // resolution never reads (an older catalog's bytes are nearly all those): neither the document nor
      // the slimmed one is ever held whole, and the model's strings keep no document alive
      const loaded: LoadResult = { config: emptyConfig(), problems: [], files: 0, bytes: 0 };
      const at = { line: 0, index: 0 }; // blobs' locations as in the whole document
      forEachSlimLineForResolution(contentOf(c), (line) => {
        loadText(line, `${c.name}.jsonl`, loaded, undefined, undefined, at);
        at.line++;
        if (line.trim() !== "") at.index++;
      });
      parts.set(c.digest, { model: validModel(validateCatalog(loaded.config)), others: loaded.config.others });
    }
    // revisions no longer served are forgotten
    const live = new Set(m.catalogs.map((c) => c.digest));
    for (const d of parts.keys()) if (!live.has(d)) parts.delete(d);
    const key = m.catalogs.map((c) => `${c.name}\0${c.priority}\0${c.digest}`).join("\n");
    if (setCache?.key !== key)
      setCache = {
        key,
        set: new CatalogSet(m.catalogs.map((c) => ({ name: c.name, priority: c.priority, ...parts.get(c.digest)! }))),
      };
    reply({ id: m.id, ready: true });
    reply({ id: m.id, result: resolve({ ...m.request, catalogs: setCache.set }) });
  } catch (e) {
    reply({ id: m.id, error: (e as Error).message });
  }
});

/** A catalog's JSON Lines, a piece at a time: read from its file, or the bytes it was sent. */
function contentOf(c: RunnerCatalog): Iterable<Uint8Array> {
  if (c.file) return fileChunks(c.file);
  if (c.jsonl) return [c.jsonl];
  throw new Error(`catalog ${c.name} (${c.digest}) was not sent to the resolver`);
}

/** Size of the pieces a catalog's file is read in. */
const PIECE = 1 << 20;

/** The range of the file in pieces of one reused buffer (each piece is read before the next one is). */
function* fileChunks(f: RunnerFileRange): Generator<Uint8Array> {
  const buf = Buffer.allocUnsafe(Math.min(PIECE, f.length));
  for (let pos = 0; pos < f.length; ) {
    const n = readSync(f.fd, buf, 0, Math.min(buf.length, f.length - pos), f.start + pos);
    if (n <= 0) throw new Error("short read from the catalog's file");
    pos += n;
    yield buf.subarray(0, n);
  }
}

/**
 * The model without the packages `opcat validate` finds problems in: catalogd serves a catalog as
 * it is (a package without a default channel, a channel with two heads), but Deppy resolves as
 * OLM v0, whose registry (opm serve) never serves such content; its other packages resolve as
 * before, and an Input of a left-out package finds no candidates.
 */
function validModel(v: ValidationResult): Model {
  if (v.problems.length === 0) return v.model;
  for (const p of v.problems) {
    const pkg = p.blob?.schema === "olm.package" ? p.blob.name : p.blob?.package;
    if (pkg !== undefined) v.model.delete(pkg);
  }
  return v.model;
}
