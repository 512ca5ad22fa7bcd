/**
 * An in-memory API server behind the verbs of {@link KubeClient} that controllers use ({@link KubeServer}),
 * for testing controllers and their steps in milliseconds. It is a real fake, not a mock: it keeps
 * objects, resourceVersions, generations, the status subresource, finalizers and deletion, label
 * selectors and server-side apply's field ownership of maps and map lists as kube-apiserver does; it
 * serves watches (from a resourceVersion, in order, label-selector filtered, 410 Gone for a version
 * older than its history — {@link FakeKube.compact} forgets the history as etcd's compaction does), dry
 * runs (`dryRun=All`: validated, never stored), raw requests on resource paths, impersonation and
 * access reviews. The same contract test runs against it and against a real API server
 * (test/kubecontract.ts), so the two cannot drift.
 *
 * Access is not RBAC: the fake evaluates no Roles or bindings. A client made by `impersonating(user)`
 * has every request judged by an authorizer function the test supplies (default: a configured list of
 * users is allowed everything, anyone else nothing), which also answers SubjectAccessReviews and
 * SelfSubjectAccessReviews; the client itself (the controllers' own user) is allowed everything.
 *
 * Admission webhooks are not called: a test may supply a mutating admission function instead (`admit`),
 * e.g. the requester record opcat's webhook writes. What it does not do, as a bare API server does not
 * either: garbage collection of owner references (that is kube-controller-manager's), defaulting and
 * schema validation.
 * Server-side apply merges the lists a kind declares as map lists (`x-kubernetes-list-type: map`, such
 * as conditions keyed by `type`: {@link FakeResource.mapLists}, read from a CRD by {@link mapListsOf})
 * item by item, by their keys: an apply sets the items it names, and an item its manager applied before
 * and no longer names is removed (another manager's stay); other lists are atomic (replaced whole). An
 * item two managers apply is owned by the last (the fake keeps no shared ownership), and a PUT takes
 * over no fields. A resourceVersion in an applied object is a precondition (409 Conflict when stale).
 * Watches send no bookmarks.
 */
import { randomUUID } from "node:crypto";
import {
  isNotFound,
  KubeApiError,
  liveOnly,
  orUndefined,
  resourcePath,
  type KubeApi,
  type KubeObject,
  type KubeServer,
  type RequestOptions,
  type ResourceInfo,
  type UserInfo,
  type WatchEvent,
} from "./client.js";
import { selectorMatches, type LabelSelector } from "./selector.js";

export type { KubeApi, KubeServer };

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
  /**
   * The lists server-side apply merges by keys, by dotted path (`status.conditions`: `["type"]`); other
   * lists are atomic. A CRD's: {@link mapListsOf}.
   */
  mapLists?: Readonly<Record<string, readonly string[]>>;
}

/** The map lists (`x-kubernetes-list-type: map`) of a CRD's served version, by dotted path, with their keys. */
export function mapListsOf(crd: unknown, version?: string): Record<string, string[]> {
  type Schema = {
    properties?: Record<string, Schema>;
    items?: Schema;
    "x-kubernetes-list-type"?: string;
    "x-kubernetes-list-map-keys"?: string[];
  };
  const versions = (
    crd as { spec?: { versions?: { name: string; schema?: { openAPIV3Schema?: Schema } }[] } } | undefined
  )?.spec?.versions;
  const v = versions?.find((x) => x.name === version) ?? versions?.[0];
  const out: Record<string, string[]> = {};
  const walk = (s: Schema | undefined, path: string) => {
    if (s?.["x-kubernetes-list-type"] === "map") out[path] = [...(s["x-kubernetes-list-map-keys"] ?? [])];
    for (const [k, p] of Object.entries(s?.properties ?? {})) walk(p, path ? `${path}.${k}` : k);
    if (s?.items) walk(s.items, path);
  };
  walk(v?.schema?.openAPIV3Schema, "");
  return out;
}

/** The kinds every cluster has that tests use. */
export const CORE_RESOURCES: FakeResource[] = [
  { apiVersion: "v1", kind: "Namespace", resource: "namespaces", namespaced: false },
  { apiVersion: "v1", kind: "ConfigMap", resource: "configmaps", namespaced: true },
  { apiVersion: "v1", kind: "Secret", resource: "secrets", namespaced: true },
  { apiVersion: "v1", kind: "ServiceAccount", resource: "serviceaccounts", namespaced: true },
  { apiVersion: "v1", kind: "Event", resource: "events", namespaced: true },
];

/** What a request asks, as an authorizer sees it (a SubjectAccessReview's resourceAttributes). */
export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** Whether `user` may do what `attrs` say. */
export type Authorizer = (user: UserInfo, attrs: ResourceAttributes) => boolean;

/** One request the fake served: who asked, what, and whether it was a dry run or refused. */
export interface FakeRequest {
  /** The impersonated user; undefined for the client itself. */
  user?: string;
  verb: string;
  resource: string;
  namespace?: string;
  name?: string;
  dryRun?: boolean;
  forbidden?: boolean;
}

/** A write as a mutating admission webhook sees it. */
export interface AdmissionRequest {
  operation: "CREATE" | "UPDATE";
  object: KubeObject;
  oldObject?: KubeObject;
  userInfo: UserInfo;
}

/**
 * A mutating admission webhook's work, as a test supplies it: the object to store instead (undefined:
 * as it is), or a thrown {@link KubeApiError} to refuse the write. Called for creates and updates of
 * objects (not of their status), dry runs included, before the write is stored.
 */
export type Admission = (req: AdmissionRequest) => KubeObject | undefined;

export interface FakeOptions {
  /** Users allowed everything by the default authorizer (nobody else is allowed anything). */
  allowed?: Iterable<string>;
  /** Judges impersonated requests and access reviews instead of `allowed`. */
  authorize?: Authorizer;
  /** Mutating admission (default: none). */
  admit?: Admission;
}

type Json = Record<string, unknown>;
const clone = <T>(x: T): T => structuredClone(x);
const isMap = (x: unknown): x is Json => !!x && typeof x === "object" && !Array.isArray(x);
const timestamp = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
/** Who the client itself is (not impersonating). */
const ADMIN: UserInfo = { username: "system:admin", groups: ["system:masters", "system:authenticated"] };

/** A change as the history keeps it for watches: the object after it, and before it (for selectors). */
interface Change {
  rv: number;
  type: WatchEvent["type"];
  object: KubeObject;
  prev?: KubeObject;
}

/** What every client of one fake shares (an impersonating client is another view of it). */
class Store {
  readonly kinds = new Map<string, FakeResource>();
  readonly objects = new Map<string, KubeObject>();
  /** The fields each field manager last applied, per object key. */
  readonly applied = new Map<string, Map<string, Json>>();
  rv = 1000;
  /** Changes after `compactedTo`, in order. */
  history: Change[] = [];
  compactedTo = 1000;
  readonly listeners = new Set<(kind: string, e: WatchEvent) => void>();
  readonly watchers = new Set<(c: Change) => void>();
  readonly requests: Record<string, number> = {};
  readonly log: FakeRequest[] = [];
  allowed: Set<string>;
  authorize: Authorizer;
  admit: Admission | undefined;
  constructor(opts: FakeOptions) {
    this.allowed = new Set(opts.allowed ?? []);
    this.authorize = opts.authorize ?? ((u) => this.allowed.has(u.username));
    this.admit = opts.admit;
  }
}

export class FakeKube implements KubeServer {
  private readonly s: Store;
  /** The user this client impersonates (undefined: the client itself, allowed everything). */
  readonly user: UserInfo | undefined;
  readonly fieldManager = "opcat";

  constructor(resources: FakeResource[] = [], opts: FakeOptions = {}, shared?: { store: Store; user: UserInfo }) {
    this.user = shared?.user;
    if (shared) {
      this.s = shared.store;
      return;
    }
    this.s = new Store(opts);
    for (const r of [...CORE_RESOURCES, ...resources]) this.s.kinds.set(`${r.apiVersion}/${r.kind}`, r);
    for (const name of ["default", "kube-system"])
      this.store({ apiVersion: "v1", kind: "Namespace", metadata: { name } }, "ADDED");
  }

  /** Requests made, per verb (`GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `DELETE`), by every view. */
  get requests(): Record<string, number> {
    return this.s.requests;
  }

  /** Every request, in order, with the user who made it. */
  get requestLog(): readonly FakeRequest[] {
    return this.s.log;
  }

  /** Users the default authorizer allows (a live set: tests add and remove users). */
  get allowed(): Set<string> {
    return this.s.allowed;
  }

  /** Judges impersonated requests and access reviews (replaceable: a case may change who may do what). */
  get authorize(): Authorizer {
    return this.s.authorize;
  }

  set authorize(fn: Authorizer) {
    this.s.authorize = fn;
  }

  /** The latest resourceVersion. */
  get resourceVersion(): string {
    return String(this.s.rv);
  }

  /** Calls `fn` with every change (kind as `apiVersion/Kind`), as a watch would report it. */
  onChange(fn: (kind: string, e: WatchEvent) => void): () => void {
    this.s.listeners.add(fn);
    return () => this.s.listeners.delete(fn);
  }

  /** Forgets the history of changes: a watch from a resourceVersion before now is 410 Gone. */
  compact(): void {
    this.s.history = [];
    this.s.compactedTo = this.s.rv;
  }

  /** A client of the same store acting as `user`: its requests are judged by the authorizer and logged as its. */
  impersonating(user: { username: string; groups?: string[]; uid?: string; extra?: Record<string, string[]> }) {
    const u: UserInfo = { ...user, groups: user.groups ?? [] };
    return new FakeKube([], {}, { store: this.s, user: u });
  }

  async whoami(): Promise<UserInfo> {
    return clone(this.user ?? ADMIN);
  }

  close(): void {}

  async resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const r = this.kind(apiVersion, kind);
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    return { group, version, kind, resource: r.resource.split(".")[0], namespaced: r.namespaced };
  }

  async path(apiVersion: string, kind: string, namespace?: string, name?: string, subresource?: string) {
    return resourcePath(await this.resourceFor(apiVersion, kind), namespace, name, subresource);
  }

  async get<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, name: string, ns?: string) {
    const r = this.kind(apiVersion, kind);
    this.check("GET", "get", r, ns, name);
    const o = this.s.objects.get(this.key(r, name, ns));
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
    const r = this.kind(apiVersion, kind);
    this.check("LIST", "list", r, opts.namespace);
    if (opts.fieldSelector) throw new KubeApiError(400, "BadRequest", "field selectors are not served by the fake");
    const sel = opts.labelSelector ? parseSelector(opts.labelSelector) : {};
    const items = [...this.s.objects.values()]
      .filter((o) => this.matches(r, o, opts.namespace, sel))
      .sort((a, b) =>
        this.key(r, a.metadata.name, a.metadata.namespace).localeCompare(
          this.key(r, b.metadata.name, b.metadata.namespace),
        ),
      )
      .map((o) => clone(o) as T);
    return { items, resourceVersion: String(this.s.rv) };
  }

  async create<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    return this.createObject(obj);
  }

  async replace<T extends KubeObject = KubeObject>(obj: T, opts: { subresource?: "status" } = {}): Promise<T> {
    const r = this.kind(obj.apiVersion, obj.kind);
    this.check("PUT", "update", r, obj.metadata.namespace, obj.metadata.name, opts.subresource);
    const key = this.key(r, obj.metadata.name, obj.metadata.namespace);
    const cur = this.s.objects.get(key);
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
    const r = this.kind(apiVersion, kind);
    this.check("PATCH", "patch", r, opts.namespace, name, opts.subresource);
    const cur = this.s.objects.get(this.key(r, name, opts.namespace));
    if (!cur) throw this.notFound(r, name);
    const want = (patch as KubeObject).metadata?.resourceVersion;
    if (want !== undefined && want !== cur.metadata.resourceVersion) throw this.conflict(r, name);
    return this.update(r, cur, mergePatch(clone(cur), patch) as KubeObject, opts.subresource) as T;
  }

  async apply<T extends KubeObject = KubeObject>(
    obj: T,
    opts: { force?: boolean; subresource?: "status"; dryRun?: boolean; fieldManager?: string } = {},
  ): Promise<T> {
    const r = this.kind(obj.apiVersion, obj.kind);
    this.check("PATCH", "patch", r, obj.metadata.namespace, obj.metadata.name, opts.subresource, opts.dryRun);
    const key = this.key(r, obj.metadata.name, obj.metadata.namespace);
    const manager = `${opts.fieldManager ?? this.fieldManager}${opts.subresource ? "/status" : ""}`;
    const mine = this.s.applied.get(key) ?? new Map<string, Json>();
    const cur = this.s.objects.get(key);
    const fields = clone(obj) as unknown as Json;
    delete (fields.metadata as Json).resourceVersion; // a precondition, not a field anyone owns
    if (!cur) {
      if (opts.subresource) throw this.notFound(r, obj.metadata.name);
      const out = this.createObject(obj, { dryRun: opts.dryRun, counted: true });
      if (!opts.dryRun) this.s.applied.set(key, mine.set(manager, fields));
      return out;
    }
    const want = obj.metadata.resourceVersion;
    if (want !== undefined && want !== cur.metadata.resourceVersion) throw this.conflict(r, obj.metadata.name);
    const lists = r.mapLists ?? {};
    const base = withoutDropped(clone(cur) as unknown as Json, mine.get(manager), fields, lists);
    const next = merged(base, fields, lists) as unknown as KubeObject;
    if (opts.dryRun) return this.update(r, cur, next, opts.subresource, true) as T;
    const out = this.update(r, cur, next, opts.subresource);
    this.s.applied.set(key, mine.set(manager, fields));
    return clone(out) as T;
  }

  async delete(apiVersion: string, kind: string, name: string, ns?: string, _policy?: string): Promise<boolean> {
    try {
      await this.deleteObject(this.kind(apiVersion, kind), name, ns, false);
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  private deleteObject(r: FakeResource, name: string, ns: string | undefined, dryRun: boolean): KubeObject {
    this.check("DELETE", "delete", r, ns, name, undefined, dryRun);
    const key = this.key(r, name, ns);
    const cur = this.s.objects.get(key);
    if (!cur) throw this.notFound(r, name);
    if (dryRun) return clone(cur);
    if ((cur.metadata.finalizers ?? []).length > 0) {
      if (cur.metadata.deletionTimestamp) return clone(cur);
      const next = clone(cur);
      next.metadata.deletionTimestamp = timestamp();
      next.metadata.deletionGracePeriodSeconds = 0;
      return this.store(next, "MODIFIED", cur);
    }
    this.remove(key, cur);
    return clone(cur);
  }

  /**
   * A request on a resource path, as {@link KubeClient.request} sends it: GET (an object or a list),
   * POST (a create), DELETE, with `dryRun=All`; and the few non-resource requests controllers make
   * (`GET /apis`, `GET /version`, access reviews, SelfSubjectReview).
   */
  async request<T = KubeObject>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const special = this.special(method, path, opts.body);
    if (special !== undefined) return special as T;
    const t = this.target(path);
    const dryRun = opts.query?.dryRun === "All";
    if (method === "GET" && t.name === undefined) {
      const items = await this.list(t.r.apiVersion, t.r.kind, {
        namespace: t.namespace,
        labelSelector: opts.query?.labelSelector as string | undefined,
      });
      return { items: items.items, metadata: { resourceVersion: items.resourceVersion } } as T;
    }
    if (method === "GET") return (await this.get(t.r.apiVersion, t.r.kind, t.name!, t.namespace)) as T;
    if (method === "POST" && t.name === undefined) {
      const body = clone(opts.body as KubeObject);
      if (t.namespace) body.metadata.namespace ??= t.namespace;
      return this.createObject(body, { dryRun }) as T;
    }
    if (method === "DELETE" && t.name !== undefined) return this.deleteObject(t.r, t.name, t.namespace, dryRun) as T;
    throw new KubeApiError(405, "MethodNotAllowed", `the fake serves no ${method} ${path}`);
  }

  /**
   * A watch as {@link KubeClient.watch} opens it: from `resourceVersion` (every change after it, in
   * order; 410 Gone when the history no longer reaches back to it), or without one the objects there
   * are as ADDED and then changes; filtered by namespace and label selector (an object whose labels
   * stop matching is DELETED, one that starts matching ADDED, as kube-apiserver's watch cache does).
   * Resolves when the signal aborts or after `timeoutSeconds`.
   */
  async watch(...[path, query, onEvent, signal]: Parameters<KubeServer["watch"]>): Promise<void> {
    const t = this.target(path);
    this.check("WATCH", "watch", t.r, t.namespace);
    const sel = query.labelSelector ? parseSelector(String(query.labelSelector)) : {};
    const from = query.resourceVersion ? Number(query.resourceVersion) : 0;
    if (from > 0 && from < this.s.compactedTo)
      throw new KubeApiError(410, "Expired", `too old resource version: ${from} (${this.s.compactedTo})`);
    if (signal?.aborted) return;
    const events: WatchEvent[] = [];
    if (from > 0) for (const c of this.s.history) if (c.rv > from) events.push(...this.seen(t, sel, c));
    if (from <= 0)
      for (const o of this.s.objects.values())
        if (this.matches(t.r, o, t.namespace, sel)) events.push({ type: "ADDED", object: clone(o) });
    return new Promise<void>((resolve, reject) => {
      let ended = false;
      const deliver = (e: WatchEvent) =>
        queueMicrotask(() => {
          if (ended) return;
          try {
            onEvent(e);
          } catch (err) {
            end();
            reject(err);
          }
        });
      const watcher = (c: Change) => {
        for (const e of this.seen(t, sel, c)) deliver(e);
      };
      const timer = query.timeoutSeconds ? setTimeout(() => end(), Number(query.timeoutSeconds) * 1000) : undefined;
      timer?.unref();
      const end = () => {
        ended = true;
        this.s.watchers.delete(watcher);
        clearTimeout(timer);
        signal?.removeEventListener("abort", end);
        resolve();
      };
      for (const e of events) deliver(e);
      this.s.watchers.add(watcher);
      signal?.addEventListener("abort", end, { once: true });
    });
  }

  /** The events a watch of `t` with selector `sel` sees of one change. */
  private seen(t: { r: FakeResource; namespace?: string }, sel: LabelSelector, c: Change): WatchEvent[] {
    const now = this.matches(t.r, c.object, t.namespace, sel);
    const before = c.prev !== undefined && this.matches(t.r, c.prev, t.namespace, sel);
    if (c.type === "MODIFIED" && before && !now) {
      const gone = clone(c.prev!);
      gone.metadata.resourceVersion = c.object.metadata.resourceVersion;
      return [{ type: "DELETED", object: gone }];
    }
    if (!now) return [];
    return [{ type: c.type === "MODIFIED" && !before ? "ADDED" : c.type, object: clone(c.object) }];
  }

  private matches(r: FakeResource, o: KubeObject, namespace: string | undefined, sel: LabelSelector): boolean {
    return (
      o.apiVersion === r.apiVersion &&
      o.kind === r.kind &&
      (!namespace || !r.namespaced || o.metadata.namespace === namespace) &&
      selectorMatches(sel, o.metadata.labels)
    );
  }

  /** Answers of the non-resource requests (undefined: a resource path). */
  private special(method: string, path: string, body: unknown): unknown {
    const p = path.split("?")[0];
    if (method === "GET" && p === "/apis") {
      const groups = [...new Set([...this.s.kinds.values()].map((r) => r.apiVersion))]
        .filter((v) => v.includes("/"))
        .map((v) => v.split("/")[0]);
      return { kind: "APIGroupList", groups: [...new Set(groups)].map((name) => ({ name })) };
    }
    if (method === "GET" && p === "/version") return { major: "1", minor: "33", gitVersion: "v1.33.0-opcat-fake" };
    if (method !== "POST") return undefined;
    const review = body as { spec?: { user?: string; groups?: string[]; resourceAttributes?: ResourceAttributes } };
    if (p === "/apis/authorization.k8s.io/v1/subjectaccessreviews" || p.endsWith("/selfsubjectaccessreviews")) {
      this.count("POST");
      const self = p.endsWith("/selfsubjectaccessreviews");
      const user = self ? this.user : { username: review.spec?.user ?? "", groups: review.spec?.groups ?? [] };
      const attrs = { verb: "", group: "", resource: "", ...review.spec?.resourceAttributes };
      const allowed = user === undefined || this.s.authorize(user, attrs);
      return {
        ...(body as Json),
        status: { allowed, ...(allowed ? {} : { reason: "denied by the fake's authorizer" }) },
      };
    }
    if (p === "/apis/authentication.k8s.io/v1/selfsubjectreviews") {
      this.count("POST");
      const userInfo = this.user ?? ADMIN;
      return { ...(body as Json), status: { userInfo: clone(userInfo) } };
    }
    return undefined;
  }

  /** The kind, namespace and name a resource path names. */
  private target(path: string): { r: FakeResource; namespace?: string; name?: string; subresource?: string } {
    const seg = path.split("?")[0].split("/").filter(Boolean).map(decodeURIComponent);
    const [apiVersion, rest] =
      seg[0] === "api" ? [seg[1], seg.slice(2)] : seg[0] === "apis" ? [`${seg[1]}/${seg[2]}`, seg.slice(3)] : ["", []];
    let namespace: string | undefined;
    let tail = rest;
    if (rest[0] === "namespaces" && rest.length > 2) {
      namespace = rest[1];
      tail = rest.slice(2);
    }
    for (const r of this.s.kinds.values())
      if (r.apiVersion === apiVersion && r.resource.split(".")[0] === tail[0])
        return { r, namespace, name: tail[1], subresource: tail[2] };
    if (tail[0] === "namespaces" && apiVersion === "v1") return { r: this.kind("v1", "Namespace"), name: rest[1] };
    throw new KubeApiError(404, "NotFound", `the server could not find the requested resource (${path})`);
  }

  /**
   * Counts and logs a request, and judges it when this client impersonates a user (403 Forbidden with
   * kube-apiserver's message when the authorizer says no).
   */
  private check(
    verb: string,
    action: string,
    r: FakeResource,
    namespace?: string,
    name?: string,
    subresource?: string,
    dryRun?: boolean,
  ): void {
    this.count(verb);
    const resource = r.resource.split(".")[0];
    const group = r.apiVersion.includes("/") ? r.apiVersion.split("/")[0] : "";
    const ns = r.namespaced ? (namespace ?? (action === "create" ? "default" : undefined)) : undefined;
    const entry: FakeRequest = { verb: action, resource: `${resource}${subresource ? `/${subresource}` : ""}` };
    if (this.user) entry.user = this.user.username;
    if (ns) entry.namespace = ns;
    if (name) entry.name = name;
    if (dryRun) entry.dryRun = true;
    this.s.log.push(entry);
    if (!this.user) return;
    if (this.s.authorize(this.user, { verb: action, group, resource, namespace: ns, name, subresource })) return;
    entry.forbidden = true;
    const what = name && action !== "create" ? `${r.resource} "${name}"` : r.resource;
    const where = ns ? `in the namespace "${ns}"` : "at the cluster scope";
    throw new KubeApiError(
      403,
      "Forbidden",
      `${what} is forbidden: User "${this.user.username}" cannot ${action} resource ` +
        `"${resource}${subresource ? `/${subresource}` : ""}" in API group "${group}" ${where}`,
    );
  }

  private createObject<T extends KubeObject>(obj: T, opts: { dryRun?: boolean; counted?: boolean } = {}): T {
    const r = this.kind(obj.apiVersion, obj.kind);
    if (!opts.counted) this.check("POST", "create", r, obj.metadata.namespace, undefined, undefined, opts.dryRun);
    const o = clone(obj) as KubeObject;
    if (!o.metadata.name && o.metadata.generateName)
      o.metadata.name = o.metadata.generateName + randomUUID().replace(/-/g, "").slice(0, 5);
    if (!o.metadata.name) throw new KubeApiError(422, "Invalid", `${r.kind} is invalid: metadata.name: Required value`);
    if (r.namespaced) {
      o.metadata.namespace ??= "default";
      if (!this.s.objects.has(`v1/Namespace//${o.metadata.namespace}`))
        throw new KubeApiError(404, "NotFound", `namespaces "${o.metadata.namespace}" not found`);
    } else delete o.metadata.namespace;
    const key = this.key(r, o.metadata.name, o.metadata.namespace);
    if (this.s.objects.has(key))
      throw new KubeApiError(409, "AlreadyExists", `${r.resource} "${o.metadata.name}" already exists`);
    o.metadata.uid = randomUUID();
    o.metadata.creationTimestamp = timestamp();
    delete o.metadata.deletionTimestamp;
    delete o.metadata.resourceVersion;
    if (r.generation) o.metadata.generation = 1;
    if (r.statusSubresource) delete (o as Json).status;
    const admitted = this.admitted({ operation: "CREATE", object: o, userInfo: this.user ?? ADMIN });
    if (opts.dryRun) return admitted as T;
    return this.store(admitted, "ADDED") as T;
  }

  /** Applies `next` over `cur` as a write to the object or its status subresource (not stored on a dry run). */
  private update(r: FakeResource, cur: KubeObject, next: KubeObject, subresource?: "status", dryRun = false) {
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
    const out =
      subresource === "status"
        ? (o as unknown as KubeObject)
        : this.admitted({
            operation: "UPDATE",
            object: o as unknown as KubeObject,
            oldObject: clone(cur),
            userInfo: this.user ?? ADMIN,
          });
    if (r.generation && !sameSpec(cur, out)) out.metadata.generation = (cur.metadata.generation ?? 0) + 1;
    if (JSON.stringify(out) === JSON.stringify(cur) || dryRun) return clone(out);
    const key = this.key(r, out.metadata.name, out.metadata.namespace);
    if (out.metadata.deletionTimestamp && (out.metadata.finalizers ?? []).length === 0) {
      this.remove(key, out);
      return clone(out);
    }
    return this.store(out, "MODIFIED", cur);
  }

  /** The object after mutating admission (the identity fields kept as they were). */
  private admitted(req: AdmissionRequest): KubeObject {
    const out = this.s.admit?.(clone(req) as AdmissionRequest);
    if (!out) return req.object;
    const { name, namespace, uid, resourceVersion, generation, creationTimestamp, deletionTimestamp } =
      req.object.metadata;
    const meta = { name, namespace, uid, resourceVersion, generation, creationTimestamp, deletionTimestamp };
    for (const [k, v] of Object.entries(meta)) {
      if (v === undefined) delete out.metadata[k];
      else out.metadata[k] = v;
    }
    return out;
  }

  private store(o: KubeObject, type: WatchEvent["type"], prev?: KubeObject): KubeObject {
    const r = this.kind(o.apiVersion, o.kind);
    // empty lists and maps of metadata are not kept (`omitempty`)
    for (const k of ["labels", "annotations", "finalizers", "ownerReferences"] as const) {
      const v = o.metadata[k];
      if (v !== undefined && Object.keys(v).length === 0) delete o.metadata[k];
    }
    o.metadata.resourceVersion = String(++this.s.rv);
    this.s.objects.set(this.key(r, o.metadata.name, o.metadata.namespace), o);
    this.emit({ rv: this.s.rv, type, object: clone(o), prev });
    return clone(o);
  }

  private remove(key: string, o: KubeObject): void {
    this.s.objects.delete(key);
    this.s.applied.delete(key);
    const gone = clone(o);
    gone.metadata.resourceVersion = String(++this.s.rv);
    this.emit({ rv: this.s.rv, type: "DELETED", object: gone });
  }

  private emit(c: Change): void {
    this.s.history.push(c);
    for (const l of this.s.listeners)
      l(`${c.object.apiVersion}/${c.object.kind}`, { type: c.type, object: clone(c.object) });
    for (const w of this.s.watchers) w(c);
  }

  private kind(apiVersion: string, kind: string): FakeResource {
    const r = this.s.kinds.get(`${apiVersion}/${kind}`);
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
    this.s.requests[verb] = (this.s.requests[verb] ?? 0) + 1;
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

/** Map lists by path (see {@link FakeResource.mapLists}). */
type MapLists = Readonly<Record<string, readonly string[]>>;

const sub = (path: string, k: string) => (path ? `${path}.${k}` : k);

/** Whether two items of a map list have the same keys. */
const sameKeys = (keys: readonly string[], a: unknown, b: unknown) =>
  isMap(a) && isMap(b) && keys.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));

/** `applied` laid over `base`: maps merged, map lists merged item by item by their keys, other lists replaced. */
function merged(base: Json, applied: Json, lists: MapLists, path = ""): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(applied)) {
    const p = sub(path, k);
    const keys = lists[p];
    const was = out[k];
    if (keys && Array.isArray(v) && Array.isArray(was)) {
      const items = [...was];
      for (const item of v) {
        const i = items.findIndex((x) => sameKeys(keys, x, item));
        if (i < 0) items.push(item);
        else items[i] = isMap(item) && isMap(items[i]) ? merged(items[i] as Json, item, lists, p) : item;
      }
      out[k] = items;
    } else out[k] = isMap(v) && isMap(was) ? merged(was, v, lists, p) : v;
  }
  return out;
}

/**
 * `obj` without the fields the manager applied before (`prev`) and no longer applies (`next`); in a map
 * list, the items (by their keys) it no longer applies.
 */
function withoutDropped(obj: Json, prev: Json | undefined, next: Json, lists: MapLists, path = ""): Json {
  if (!prev) return obj;
  for (const [k, v] of Object.entries(prev)) {
    if (k === "apiVersion" || k === "kind" || (k === "name" && "namespace" in prev)) continue;
    const p = sub(path, k);
    const keys = lists[p];
    if (!(k in next)) delete obj[k];
    else if (keys && Array.isArray(v) && Array.isArray(next[k]) && Array.isArray(obj[k])) {
      const now = next[k] as unknown[];
      const gone = v.filter((item) => !now.some((x) => sameKeys(keys, x, item)));
      obj[k] = (obj[k] as unknown[]).filter((x) => !gone.some((g) => sameKeys(keys, g, x)));
      for (const item of obj[k] as unknown[]) {
        const before = v.find((x) => sameKeys(keys, x, item));
        const after = now.find((x) => sameKeys(keys, x, item));
        if (isMap(before) && isMap(after) && isMap(item)) withoutDropped(item, before, after, lists, p);
      }
    } else if (isMap(v) && isMap(next[k]) && isMap(obj[k]))
      withoutDropped(obj[k] as Json, v, next[k] as Json, lists, p);
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
