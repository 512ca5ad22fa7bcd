/**
 * An in-memory API server behind the object verbs of {@link KubeClient} ({@link KubeApi}), for testing
 * controllers and their steps in milliseconds. It is a real fake, not a mock: it keeps objects,
 * resourceVersions, generations, the status subresource, finalizers and deletion, label selectors
 * and server-side apply's field ownership of maps as kube-apiserver does, and the same contract test
 * runs against it and against a real API server (test/kubecontract.ts), so the two cannot drift.
 *
 * What it does not do, as a bare API server does not either: garbage collection of owner references
 * (that is kube-controller-manager's), admission webhooks, RBAC, defaulting and schema validation.
 * Server-side apply treats lists as atomic (a list with map keys, such as conditions, is replaced
 * whole rather than merged by key).
 */
import { randomUUID } from "node:crypto";
import { KubeApiError, liveOnly, orUndefined, type KubeApi, type KubeObject, type WatchEvent } from "./client.js";
import { selectorMatches, type LabelSelector } from "./selector.js";

export type { KubeApi };

/** A kind the fake serves. */
export interface FakeResource {
  apiVersion: string;
  kind: string;
  /** The plural name used in messages (`configmaps`, `widgets.example.com`). */
  resource: string;
  namespaced: boolean;
  /** Writes to the object ignore `status`, writes to `/status` touch only it (custom resources with it). */
  statusSubresource?: boolean;
  /** metadata.generation is kept (custom resources, workloads; not ConfigMaps or Secrets). */
  generation?: boolean;
}

/** The kinds every cluster has that tests use. */
export const CORE_RESOURCES: FakeResource[] = [
  { apiVersion: "v1", kind: "Namespace", resource: "namespaces", namespaced: false },
  { apiVersion: "v1", kind: "ConfigMap", resource: "configmaps", namespaced: true },
  { apiVersion: "v1", kind: "Secret", resource: "secrets", namespaced: true },
  { apiVersion: "v1", kind: "ServiceAccount", resource: "serviceaccounts", namespaced: true },
];

type Json = Record<string, unknown>;
const clone = <T>(x: T): T => structuredClone(x);
const isMap = (x: unknown): x is Json => !!x && typeof x === "object" && !Array.isArray(x);

export class FakeKube implements KubeApi {
  private readonly kinds = new Map<string, FakeResource>();
  private readonly objects = new Map<string, KubeObject>();
  /** The fields each field manager last applied, per object key. */
  private readonly applied = new Map<string, Map<string, Json>>();
  private rv = 1000;
  private readonly listeners = new Set<(kind: string, e: WatchEvent) => void>();
  /** Requests made, per verb (`GET`, `LIST`, `POST`, `PUT`, `PATCH`, `DELETE`). */
  readonly requests: Record<string, number> = {};

  constructor(resources: FakeResource[] = []) {
    for (const r of [...CORE_RESOURCES, ...resources]) this.kinds.set(`${r.apiVersion}/${r.kind}`, r);
    for (const name of ["default", "kube-system"])
      this.store({ apiVersion: "v1", kind: "Namespace", metadata: { name } }, "ADDED");
  }

  /** Calls `fn` with every change (kind as `apiVersion/Kind`), as a watch would report it. */
  onChange(fn: (kind: string, e: WatchEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async get<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, name: string, ns?: string) {
    this.count("GET");
    const r = this.kind(apiVersion, kind);
    const o = this.objects.get(this.key(r, name, ns));
    if (!o) throw this.notFound(r, name);
    return clone(o) as T;
  }

  async tryGet<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, name: string, ns?: string) {
    return orUndefined(this.get<T>(apiVersion, kind, name, ns));
  }

  async getLive<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    opts: { uid?: string; namespace?: string } = {},
  ) {
    return liveOnly(await this.tryGet<T>(apiVersion, kind, name, opts.namespace), opts.uid);
  }

  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string; resourceVersion?: string } = {},
  ) {
    this.count("LIST");
    const r = this.kind(apiVersion, kind);
    if (opts.fieldSelector) throw new KubeApiError(400, "BadRequest", "field selectors are not served by the fake");
    const sel = opts.labelSelector ? parseSelector(opts.labelSelector) : {};
    const items = [...this.objects.values()]
      .filter((o) => o.apiVersion === apiVersion && o.kind === kind)
      .filter((o) => !opts.namespace || !r.namespaced || o.metadata.namespace === opts.namespace)
      .filter((o) => selectorMatches(sel, o.metadata.labels))
      .sort((a, b) =>
        this.key(r, a.metadata.name, a.metadata.namespace).localeCompare(
          this.key(r, b.metadata.name, b.metadata.namespace),
        ),
      )
      .map((o) => clone(o) as T);
    return { items, resourceVersion: String(this.rv) };
  }

  async create<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    this.count("POST");
    return this.createObject(obj);
  }

  async replace<T extends KubeObject = KubeObject>(obj: T, opts: { subresource?: "status" } = {}): Promise<T> {
    this.count("PUT");
    const r = this.kind(obj.apiVersion, obj.kind);
    const key = this.key(r, obj.metadata.name, obj.metadata.namespace);
    const cur = this.objects.get(key);
    if (!cur) throw this.notFound(r, obj.metadata.name);
    if (!obj.metadata.resourceVersion)
      throw new KubeApiError(
        422,
        "Invalid",
        `${r.kind} "${obj.metadata.name}" is invalid: metadata.resourceVersion: Invalid value: 0x0: ` +
          "must be specified for an update",
      );
    if (obj.metadata.resourceVersion !== cur.metadata.resourceVersion) throw this.conflict(r, obj.metadata.name);
    return this.update(r, cur, clone(obj) as KubeObject, opts.subresource) as T;
  }

  async mergePatch<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    patch: unknown,
    opts: { namespace?: string; subresource?: "status" } = {},
  ): Promise<T> {
    this.count("PATCH");
    const r = this.kind(apiVersion, kind);
    const cur = this.objects.get(this.key(r, name, opts.namespace));
    if (!cur) throw this.notFound(r, name);
    const want = (patch as KubeObject).metadata?.resourceVersion;
    if (want !== undefined && want !== cur.metadata.resourceVersion) throw this.conflict(r, name);
    return this.update(r, cur, mergePatch(clone(cur), patch) as KubeObject, opts.subresource) as T;
  }

  async apply<T extends KubeObject = KubeObject>(
    obj: T,
    opts: { force?: boolean; subresource?: "status"; dryRun?: boolean; fieldManager?: string } = {},
  ): Promise<T> {
    this.count("PATCH");
    const r = this.kind(obj.apiVersion, obj.kind);
    const key = this.key(r, obj.metadata.name, obj.metadata.namespace);
    const manager = `${opts.fieldManager ?? "opcat"}${opts.subresource ? "/status" : ""}`;
    const mine = this.applied.get(key) ?? new Map<string, Json>();
    const cur = this.objects.get(key);
    const fields = clone(obj) as unknown as Json;
    if (opts.dryRun) {
      const base = cur ? withoutDropped(clone(cur) as unknown as Json, mine.get(manager), fields) : {};
      return merged(base, fields) as unknown as T;
    }
    let out: KubeObject;
    if (!cur) {
      if (opts.subresource) throw this.notFound(r, obj.metadata.name);
      out = this.createObject(obj);
    } else {
      const base = withoutDropped(clone(cur) as unknown as Json, mine.get(manager), fields);
      out = this.update(r, cur, merged(base, fields) as unknown as KubeObject, opts.subresource);
    }
    mine.set(manager, fields);
    this.applied.set(key, mine);
    return clone(out) as T;
  }

  async delete(apiVersion: string, kind: string, name: string, ns?: string): Promise<boolean> {
    this.count("DELETE");
    const r = this.kind(apiVersion, kind);
    const key = this.key(r, name, ns);
    const cur = this.objects.get(key);
    if (!cur) return false;
    if ((cur.metadata.finalizers ?? []).length > 0) {
      if (!cur.metadata.deletionTimestamp) {
        const next = clone(cur);
        next.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
        next.metadata.deletionGracePeriodSeconds = 0;
        this.store(next, "MODIFIED");
      }
      return true;
    }
    this.remove(key, cur);
    return true;
  }

  private createObject<T extends KubeObject>(obj: T): T {
    const r = this.kind(obj.apiVersion, obj.kind);
    const o = clone(obj) as KubeObject;
    if (!o.metadata.name && o.metadata.generateName)
      o.metadata.name = o.metadata.generateName + randomUUID().replace(/-/g, "").slice(0, 5);
    if (!o.metadata.name) throw new KubeApiError(422, "Invalid", `${r.kind} is invalid: metadata.name: Required value`);
    if (r.namespaced) {
      o.metadata.namespace ??= "default";
      if (!this.objects.has(`v1/Namespace//${o.metadata.namespace}`))
        throw new KubeApiError(404, "NotFound", `namespaces "${o.metadata.namespace}" not found`);
    } else delete o.metadata.namespace;
    const key = this.key(r, o.metadata.name, o.metadata.namespace);
    if (this.objects.has(key))
      throw new KubeApiError(409, "AlreadyExists", `${r.resource} "${o.metadata.name}" already exists`);
    o.metadata.uid = randomUUID();
    o.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
    delete o.metadata.deletionTimestamp;
    if (r.generation) o.metadata.generation = 1;
    if (r.statusSubresource) delete (o as Json).status;
    return this.store(o, "ADDED") as T;
  }

  /** Applies `next` over `cur` as a write to the object or its status subresource. */
  private update(r: FakeResource, cur: KubeObject, next: KubeObject, subresource?: "status"): KubeObject {
    const o = clone(cur) as unknown as Json;
    const n = next as unknown as Json;
    if (subresource === "status") o.status = n.status;
    else {
      for (const k of Object.keys(n)) if (k !== "metadata" && !(r.statusSubresource && k === "status")) o[k] = n[k];
      for (const k of Object.keys(o))
        if (
          !(k in n) &&
          k !== "metadata" &&
          k !== "apiVersion" &&
          k !== "kind" &&
          !(r.statusSubresource && k === "status")
        )
          delete o[k];
      const m = (n.metadata ?? {}) as KubeObject["metadata"];
      const meta = o.metadata as KubeObject["metadata"];
      for (const k of ["labels", "annotations", "finalizers", "ownerReferences"] as const) {
        if (m[k] === undefined) delete meta[k];
        else (meta as Json)[k] = m[k];
      }
    }
    const out = o as unknown as KubeObject;
    if (r.generation && !sameSpec(cur, out)) out.metadata.generation = (cur.metadata.generation ?? 0) + 1;
    if (JSON.stringify(out) === JSON.stringify(cur)) return clone(cur);
    const key = this.key(r, out.metadata.name, out.metadata.namespace);
    if (out.metadata.deletionTimestamp && (out.metadata.finalizers ?? []).length === 0) {
      this.remove(key, out);
      return clone(out);
    }
    return this.store(out, "MODIFIED");
  }

  private store(o: KubeObject, type: WatchEvent["type"]): KubeObject {
    const r = this.kind(o.apiVersion, o.kind);
    o.metadata.resourceVersion = String(++this.rv);
    this.objects.set(this.key(r, o.metadata.name, o.metadata.namespace), o);
    this.emit(o, type);
    return clone(o);
  }

  private remove(key: string, o: KubeObject): void {
    this.objects.delete(key);
    this.applied.delete(key);
    const gone = clone(o);
    gone.metadata.resourceVersion = String(++this.rv);
    this.emit(gone, "DELETED");
  }

  private emit(o: KubeObject, type: WatchEvent["type"]): void {
    for (const l of this.listeners) l(`${o.apiVersion}/${o.kind}`, { type, object: clone(o) });
  }

  private kind(apiVersion: string, kind: string): FakeResource {
    const r = this.kinds.get(`${apiVersion}/${kind}`);
    if (!r) throw new KubeApiError(404, "NotFound", `the server has no resource for kind ${kind} in ${apiVersion}`);
    return r;
  }

  private key(r: FakeResource, name: string, ns?: string): string {
    return `${r.apiVersion}/${r.kind}/${r.namespaced ? (ns ?? "default") : ""}/${name}`;
  }

  private notFound(r: FakeResource, name: string): KubeApiError {
    return new KubeApiError(404, "NotFound", `${r.resource} "${name}" not found`);
  }

  private conflict(r: FakeResource, name: string): KubeApiError {
    return new KubeApiError(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${r.resource} "${name}": the object has been modified; ` +
        "please apply your changes to the latest version and try again",
    );
  }

  private count(verb: string): void {
    this.requests[verb] = (this.requests[verb] ?? 0) + 1;
  }
}

/** Everything but metadata and status: what a generation counts. */
function sameSpec(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const { metadata: _m, status: _s, ...rest } = o as unknown as Json;
    return JSON.stringify(rest);
  };
  return strip(a) === strip(b);
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return clone(patch);
  const out: Json = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** `applied` laid over `base` (maps merged, lists and scalars replaced: lists are atomic here). */
function merged(base: Json, applied: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(applied)) out[k] = isMap(v) && isMap(out[k]) ? merged(out[k] as Json, v) : v;
  return out;
}

/** `obj` without the fields the manager applied before (`prev`) and no longer applies (`next`). */
function withoutDropped(obj: Json, prev: Json | undefined, next: Json): Json {
  if (!prev) return obj;
  for (const [k, v] of Object.entries(prev)) {
    if (k === "apiVersion" || k === "kind" || (k === "name" && "namespace" in prev)) continue;
    if (!(k in next)) delete obj[k];
    else if (isMap(v) && isMap(next[k]) && isMap(obj[k])) withoutDropped(obj[k] as Json, v, next[k] as Json);
  }
  return obj;
}

/** A label selector's string form (`a=b,c!=d,e,!f,g in (x,y),h notin (z)`) as a LabelSelector. */
export function parseSelector(s: string): LabelSelector {
  const sel: Required<LabelSelector> = { matchLabels: {}, matchExpressions: [] };
  for (const part of s.match(/[^,(]+(\([^)]*\))?/g) ?? []) {
    const t = part.trim();
    let m: RegExpExecArray | null;
    if ((m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(t)))
      sel.matchExpressions.push({
        key: m[1],
        operator: m[2] === "in" ? "In" : "NotIn",
        values: m[3].split(",").map((v) => v.trim()),
      });
    else if ((m = /^([^!=\s]+)\s*!=\s*(\S*)$/.exec(t)))
      sel.matchExpressions.push({ key: m[1], operator: "NotIn", values: [m[2]] });
    else if ((m = /^([^!=\s]+)\s*==?\s*(\S*)$/.exec(t))) sel.matchLabels[m[1]] = m[2];
    else if ((m = /^!(\S+)$/.exec(t))) sel.matchExpressions.push({ key: m[1], operator: "DoesNotExist" });
    else if (t) sel.matchExpressions.push({ key: t, operator: "Exists" });
  }
  return sel;
}
