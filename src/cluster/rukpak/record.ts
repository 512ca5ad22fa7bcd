/**
 * The controller's own record of what an Instance installed: a ConfigMap in the controllers'
 * namespace (no user role grants writes there), owned by the Instance so that it goes with it. It is
 * the only source of what to prune and of which existing objects are the Instance's: nothing a user
 * writes (status, labels) steers deletion or adoption. A pivot is a transaction: the target set is
 * recorded as `pending` before anything is applied, so that a process killed half-way finishes (or
 * prunes) the same set on its next pass.
 */
import { BoundedMap } from "../kube/bounded.js";
import { isNotFound, type KubeApi, type KubeObject } from "../kube/client.js";
import { API_VERSION, type Instance, type ObjectRef } from "./api.js";
import { refKey, refOf } from "./reads.js";

export interface InstallRecord {
  instance: string;
  uid: string;
  /** Objects applied by completed installs (and still there). */
  applied: ObjectRef[];
  /** The target set of a pivot in progress (applied or about to be). */
  pending?: ObjectRef[];
  /** The Bundle and content digest of `pending` / the last completed install. */
  bundle?: string;
  digest?: string;
  /** Namespaces the controller created for this Instance. */
  namespaces?: string[];
  /** sha256 of the objects the last completed install applied (as applied: labels, owner and all). */
  rendered?: string;
}

type RecordMap = KubeObject & { data?: Record<string, string> };

export function recordName(uid: string): string {
  return `rukpak-instance-${uid}`;
}

export { refKey, refOf };

/** A record known not to exist. */
const NONE = "none";

/** How many records a store remembers (the Instances of a large cluster; the oldest is forgotten first). */
const REMEMBERED = 10_000;

export class RecordStore {
  /**
   * The records this store read or wrote last, by Instance uid, with their resourceVersion: a write
   * leaves the record known, so the next pass does not read it again. The controllers (one leader) are
   * the only writers of their namespace's records; were one written meanwhile, the next write's
   * resourceVersion would conflict, which forgets the remembered one and fails the pass (read again).
   */
  readonly #known = new BoundedMap<string, { record: InstallRecord; version: string } | typeof NONE>(REMEMBERED);

  constructor(
    private readonly client: KubeApi,
    readonly namespace: string,
  ) {}

  async read(inst: Instance): Promise<{ record: InstallRecord | undefined; version?: string }> {
    const known = this.#known.get(inst.metadata.uid!);
    if (known === NONE) return { record: undefined };
    if (known) return { record: structuredClone(known.record), version: known.version };
    const cm = await this.client.tryGet<RecordMap>("v1", "ConfigMap", recordName(inst.metadata.uid!), this.namespace);
    // none yet (a new Instance): remembered too, as its first pass reads it up to three times; the
    // first write creates it, and one made meanwhile would make that create conflict (read again)
    if (!cm) this.#known.set(inst.metadata.uid!, NONE);
    if (!cm?.data?.["record.json"]) return { record: undefined };
    try {
      const r = JSON.parse(cm.data["record.json"]) as InstallRecord;
      if (r.uid !== inst.metadata.uid || !Array.isArray(r.applied)) return { record: undefined };
      if (cm.metadata.resourceVersion) this.remember(r, cm.metadata.resourceVersion);
      return { record: r, version: cm.metadata.resourceVersion };
    } catch {
      return { record: undefined };
    }
  }

  private remember(record: InstallRecord, version: string): void {
    this.#known.set(record.uid, { record: structuredClone(record), version });
  }

  /** Writes the record (optimistic concurrency on `version`; creates it when there was none). */
  async write(inst: Instance, record: InstallRecord, version: string | undefined): Promise<string | undefined> {
    const body: RecordMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: recordName(inst.metadata.uid!),
        namespace: this.namespace,
        labels: { "app.kubernetes.io/part-of": "opcat", "rukpak.io/record-of": inst.metadata.uid! },
        annotations: { "rukpak.io/instance": inst.metadata.name },
        ownerReferences: [
          {
            apiVersion: API_VERSION,
            kind: "Instance",
            name: inst.metadata.name,
            uid: inst.metadata.uid!,
            blockOwnerDeletion: false,
          },
        ],
        ...(version ? { resourceVersion: version } : {}),
      },
      data: { "record.json": JSON.stringify(record) },
    };
    // a conflict (another writer, or a record made meanwhile) fails the reconcile, which reads again
    const create = () =>
      this.client.create<RecordMap>({ ...body, metadata: { ...body.metadata, resourceVersion: undefined } });
    let out: RecordMap;
    try {
      out = version
        ? await this.client.replace<RecordMap>(body).catch((e) => (isNotFound(e) ? create() : Promise.reject(e)))
        : await create();
    } catch (e) {
      this.#known.delete(inst.metadata.uid!);
      throw e;
    }
    if (out.metadata.resourceVersion) this.remember(record, out.metadata.resourceVersion);
    else this.#known.delete(inst.metadata.uid!);
    return out.metadata.resourceVersion;
  }
}
