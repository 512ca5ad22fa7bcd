/**
 * The worker thread of the resolver API (resolveapi.ts): answers one request per message with the
 * same `ResolverApi.answer` as the server's thread would, over its own copy of the served revisions.
 */
import { parentPort, workerData } from "node:worker_threads";
import { partsOf, ResolverApi, type ResolverRevision, type WorkerReply, type WorkerRequest } from "./resolveapi.js";

/** The revisions received, by catalog name (the newest one of each). */
const revisions = new Map<string, ResolverRevision>();
let current: WorkerRequest["catalogs"] = [];
const serials = new Map<string, number | null>();

const source = {
  names: (): string[] => current.map(([n]) => n),
  get(name: string): ResolverRevision | undefined {
    const rev = revisions.get(name);
    return rev && rev.serial === serials.get(name) ? rev : undefined;
  },
};
const { priorities } = workerData as { priorities: [string, number][] };
const api = new ResolverApi(source, { priorities: new Map(priorities) });

const reply = (m: WorkerReply): void => parentPort?.postMessage(m);

parentPort?.on("message", (m: WorkerRequest) => {
  for (const r of m.revisions) {
    const rev: ResolverRevision = {
      catalog: r.catalog,
      serial: r.serial,
      jsonl: Buffer.from(r.jsonl.buffer, r.jsonl.byteOffset, r.jsonl.byteLength),
    };
    revisions.set(r.catalog, rev);
  }
  current = m.catalogs;
  serials.clear();
  for (const [n, serial] of m.catalogs) serials.set(n, serial);
  // the served content was validated before: deriving the resolver's model is not the request's cost
  for (const n of source.names()) {
    const rev = source.get(n);
    if (rev) partsOf(rev);
  }
  reply({ ready: true });
  reply({ answer: api.answer(m.path, m.body) });
});
