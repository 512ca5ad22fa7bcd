/**
 * The resolveset's content and its writing: the entries of a resolveset Bundle's content file (the
 * bundles an Input resolved to, with the properties the resolver read), the `olm.properties`
 * annotation that carries an entry's properties to its Bundle, the resolveset's object names, and
 * {@link ResolvesetWriter}, which writes an Input's resolveset ConfigMap, Bundle and Instance.
 */
import { createHash } from "node:crypto";
import { isConflict, type KubeServer, type KubeObject } from "../kube/client.js";
import type { Informer } from "../kube/informer.js";
import type { SharedCaches } from "../runtime/caches.js";
import { API_VERSION as RUKPAK_API_VERSION, type Bundle, type Instance } from "../rukpak/api.js";
import { madeBy, type SigningKey } from "../rukpak/trust.js";
import { sameJson } from "../kube/json.js";
import type { ResolvedBundle } from "../../resolve/index.js";
import type { JsonValue } from "../../fbc/types.js";
import { DEPPY_API_VERSION, LABEL_INPUT, LABEL_RESOLVESET, RESOLVESET_CLASS, type Input } from "./api.js";

/** The content file of a resolveset Bundle. */
export const RESOLVESET_FILE = "resolved.bundles.json";
export const TRACE_FILE = "trace.txt";

/** One entry of a resolveset (one JSON object per line of its content file). */
export interface ResolvesetEntry {
  schema: "olm.bundle";
  package: string;
  name: string;
  version: string;
  image: string;
  catalog: string;
  channel: string;
  action: ResolvedBundle["action"];
  pivotFrom?: string;
  properties: { type: string; value: JsonValue }[];
}

/**
 * A resolveset entry's properties: what the resolver reads of an installed bundle. `olm.csv.metadata`
 * (descriptions, `alm-examples`, CRD descriptions: up to 165 KB for one bundle of community v4.20) is
 * kept as its `minKubeVersion` alone (the one field resolution reads, catalog.ts), or left out: an entry
 * Bundle's annotations may hold 256 KiB in all and a resolveset ConfigMap 1 MiB, and an Input with a
 * few such packages would reach them.
 */
export function entryProperties(props: readonly { type: string; value: JsonValue }[]): ResolvesetEntry["properties"] {
  const out: ResolvesetEntry["properties"] = [];
  for (const p of props) {
    if (p.type !== "olm.csv.metadata") {
      out.push(p);
      continue;
    }
    const v = p.value;
    const min = v && typeof v === "object" && !Array.isArray(v) ? v.minKubeVersion : undefined;
    if (typeof min === "string") out.push({ type: p.type, value: { minKubeVersion: min } });
  }
  return out;
}

/** Parses a resolveset content file (JSON objects, one per line or concatenated). */
export function parseResolveset(text: string): ResolvesetEntry[] {
  const out: ResolvesetEntry[] = [];
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t) out.push(JSON.parse(t) as ResolvesetEntry);
  }
  return out;
}

/** The `olm.properties` annotation: one `{"<type>": <value>}` per line (docs/cluster.md). */
export function formatPropertiesAnnotation(props: readonly { type: string; value: JsonValue }[]): string {
  return props.map((p) => JSON.stringify({ [p.type]: p.value })).join("\n");
}

export function parsePropertiesAnnotation(text: string): { type: string; value: JsonValue }[] | string {
  const out: { type: string; value: JsonValue }[] = [];
  let n = 0;
  for (const line of text.split("\n")) {
    n++;
    const t = line.trim();
    if (!t) continue;
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch (e) {
      return `line ${n}: ${(e as Error).message}`;
    }
    if (!v || typeof v !== "object" || Array.isArray(v) || Object.keys(v).length !== 1)
      return `line ${n}: expected one {"<type>": <value>} object`;
    const [type, value] = Object.entries(v as Record<string, JsonValue>)[0];
    out.push({ type, value });
  }
  return out;
}

const hash = (s: string, n = 10): string => createHash("sha256").update(s).digest("hex").slice(0, n);

/** Kubernetes object names: at most 253 characters, a DNS subdomain. */
function objectName(prefix: string, name: string, suffix = ""): string {
  const full = `${prefix}${name}${suffix}`;
  return full.length <= 253 ? full : `${full.slice(0, 240 - suffix.length)}-${hash(full, 8)}${suffix}`;
}

export const resolvesetInstanceName = (input: string): string => objectName("resolveset-", input);

/** What a {@link ResolvesetWriter} writes with and where. */
export interface ResolvesetWriterOptions {
  client: KubeServer;
  /** Namespace of the resolveset ConfigMaps. */
  namespace: string;
  /** With `self`: objects of the resolver's names that the controllers did not make are refused. */
  key?: SigningKey;
  /** The controllers' own user name. */
  self?: string;
  /** The process's caches, read before asking the API server. */
  caches?: SharedCaches;
}

/** Writes Inputs' resolvesets (the resolver's controller has one). */
export class ResolvesetWriter {
  private readonly client: KubeServer;

  constructor(private readonly opts: ResolvesetWriterOptions) {
    this.client = opts.client;
  }

  /**
   * Writes the resolveset ConfigMap (with `trace` as its trace file when given) and Bundle (named by
   * content) and, unless a dry run, the resolveset Instance. Returns the Bundle's name.
   */
  async write(
    i: Input,
    bundles: ResolvedBundle[],
    dryRun: boolean,
    trace: readonly string[] | undefined,
  ): Promise<string> {
    const input = i.metadata.name;
    const entries: ResolvesetEntry[] = bundles.map((b) => ({
      schema: "olm.bundle",
      package: b.package,
      name: b.name,
      version: b.version,
      image: b.image,
      catalog: b.catalog,
      channel: b.channel,
      action: b.action,
      ...(b.pivotFrom ? { pivotFrom: b.pivotFrom } : {}),
      properties: entryProperties(b.properties),
    }));
    const content = entries.map((e) => JSON.stringify(e)).join("\n") + (entries.length ? "\n" : "");
    // named by what would be installed (not by how it was reached: action and pivotFrom change as the
    // installed set catches up, and a new name would ask for approval again)
    const identity = entries
      .map((e) => JSON.stringify([e.package, e.name, e.image, e.catalog, e.properties]))
      .join("\n");
    const name = objectName("resolveset-", input, `-${hash(identity + (dryRun ? "dry" : ""))}`);
    const owner = {
      apiVersion: DEPPY_API_VERSION,
      kind: "Input",
      name: input,
      uid: i.metadata.uid!,
      blockOwnerDeletion: false,
    };
    const labels = { [LABEL_INPUT]: input, [LABEL_RESOLVESET]: "true" };
    const data: Record<string, string> = { [RESOLVESET_FILE]: content };
    if (trace) data[TRACE_FILE] = trace.join("\n") + "\n";
    const ns = this.opts.namespace;
    const spec = {
      class: RESOLVESET_CLASS,
      refs: [`file://content/${RESOLVESET_FILE}`],
      volumeMounts: [{ mountPath: "/content", configMap: { name, namespace: ns } }],
    };
    // from the process's caches when they hold the object (a steady state costs no request), else live:
    // an object a cache has not seen yet must not be taken for absent (it may be someone else's)
    const bundleCache = this.fullCache<Bundle>("Bundle");
    const instanceCache = this.fullCache<Instance>("Instance");
    const existing = bundleCache?.get(name) ?? (await this.client.tryGet<Bundle>(RUKPAK_API_VERSION, "Bundle", name));
    const instName = resolvesetInstanceName(input);
    const cur = dryRun
      ? undefined
      : (instanceCache?.get(instName) ??
        (await this.client.tryGet<Instance>(RUKPAK_API_VERSION, "Instance", instName)));
    // the names are predictable: a Bundle or Instance someone else made under them is never used
    if (existing && !(this.madeBySelf(existing) && sameJson(existing.spec, spec)))
      throw new Error(`Bundle ${name} exists and was not made by opcat for Input ${input}; delete it`);
    if (cur && !this.madeBySelf(cur))
      throw new Error(`Instance ${instName} exists and was not made by opcat for Input ${input}; delete it`);
    const writeBundle = !existing;
    const writeInstance = !dryRun && cur?.spec.bundle.name !== name;
    // resolving took time and the Input may have gone meanwhile: nothing is written for a deleted Input
    // (asked only when something is to be written: a steady state costs no extra request)
    if (
      (writeBundle || writeInstance) &&
      !(await this.client.getLive(DEPPY_API_VERSION, "Input", input, { uid: i.metadata.uid }))
    )
      return name;
    if (writeBundle) {
      await this.ensureNamespace();
      await this.client.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: ns, labels, ownerReferences: [owner] },
        data,
      } as KubeObject);
      await this.client
        .create<Bundle>({
          apiVersion: RUKPAK_API_VERSION,
          kind: "Bundle",
          metadata: { name, labels, ownerReferences: [owner] },
          spec,
        })
        .catch((e) => (isConflict(e) ? undefined : Promise.reject(e)));
    }
    if (writeInstance) {
      await this.client.apply<Instance>({
        apiVersion: RUKPAK_API_VERSION,
        kind: "Instance",
        metadata: { name: instName, labels: { [LABEL_INPUT]: input }, ownerReferences: [owner] },
        spec: { selector: { matchLabels: { [LABEL_INPUT]: input } }, bundle: { name } },
      });
    }
    // older resolvesets of this Input that nothing points at any more (the Instance's active one is
    // read live, and only when there is something to delete: a stale cache must not name it old)
    const older = (
      bundleCache
        ? bundleCache
            .list()
            .filter(
              (b) => b.metadata.labels?.[LABEL_INPUT] === input && b.metadata.labels?.[LABEL_RESOLVESET] === "true",
            )
        : (
            await this.client.list<Bundle>(RUKPAK_API_VERSION, "Bundle", {
              labelSelector: `${LABEL_INPUT}=${input},${LABEL_RESOLVESET}=true`,
            })
          ).items
    ).filter((b) => b.metadata.name !== name);
    if (older.length === 0) return name;
    const active = (await this.client.tryGet<Instance>(RUKPAK_API_VERSION, "Instance", instName))?.status?.activeBundle;
    for (const b of older) {
      if (b.metadata.name === active) continue;
      await this.client.delete(RUKPAK_API_VERSION, "Bundle", b.metadata.name).catch(() => false);
      await this.client.delete("v1", "ConfigMap", b.metadata.name, ns).catch(() => false);
    }
    return name;
  }

  /** The process's full cache of a RukPak kind once it has listed (undefined: none, or not yet; read live). */
  private fullCache<T extends KubeObject>(kind: "Bundle" | "Instance"): Informer<T> | undefined {
    const inf = this.opts.caches?.informer<T>(RUKPAK_API_VERSION, kind);
    return inf?.hasSynced ? inf : undefined;
  }

  /** True when the controllers made `o` (or when no identity is configured to tell). */
  private madeBySelf(o: KubeObject): boolean {
    if (!this.opts.key || !this.opts.self) return true;
    return madeBy(this.opts.key, this.opts.self, o);
  }

  private nsReady = false;
  private async ensureNamespace(): Promise<void> {
    if (this.nsReady) return;
    const ns = await this.client.tryGet("v1", "Namespace", this.opts.namespace);
    if (!ns)
      await this.client
        .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: this.opts.namespace } })
        .catch((e) => (isConflict(e) ? undefined : Promise.reject(e)));
    this.nsReady = true;
  }
}
