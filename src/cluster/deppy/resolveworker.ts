/**
 * The worker thread of Deppy's resolution (resolverunner.ts): keeps the resolver's model of each
 * catalog revision it was sent (by digest) and answers one resolution per message, so that a long
 * resolution never blocks the controllers' event loop (admission webhooks, watches, other
 * controllers) and can be stopped when it runs out of its budget.
 */
import { parentPort } from "node:worker_threads";
import { loadText } from "../../fbc/load.js";
import { validateCatalog, type ValidationResult } from "../../fbc/validate.js";
import type { Model } from "../../fbc/model.js";
import { CatalogSet, resolve, slimCatalogForResolution, type NamedCatalog } from "../../resolve/index.js";
import type { RunnerReply, RunnerRequest } from "./resolverunner.js";

const parts = new Map<string, Omit<NamedCatalog, "name" | "priority">>();
let setCache: { key: string; set: CatalogSet } | undefined;

parentPort?.on("message", (m: RunnerRequest) => {
  const reply = (r: RunnerReply) => parentPort?.postMessage(r);
  try {
    for (const c of m.catalogs) {
      if (parts.has(c.digest)) continue;
      if (!c.jsonl) throw new Error(`catalog ${c.name} (${c.digest}) was not sent to the resolver`);
      // without the bundle manifests resolution never reads (an older catalog's bytes are nearly all those)
      const loaded = loadText(slimCatalogForResolution(Buffer.from(c.jsonl).toString("utf8")), `${c.name}.jsonl`);
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
