/**
 * Kubernetes Events (core/v1) for controllers: one Event per distinct (object, reason, message),
 * with its count raised when the same thing happens again, as client-go's recorder does: a new Event
 * is one create, a repeat one patch of the count it remembers (an Event it did not write is read once).
 */
import { createHash } from "node:crypto";
import { BoundedMap } from "./bounded.js";
import { isConflict, isNotFound, type KubeServer, type KubeObject } from "./client.js";
import { now, safeMessage } from "./conditions.js";

/** How many Events' counts a recorder remembers (as client-go's event correlator's cache). */
const REMEMBERED = 4096;

export class EventRecorder {
  /** Events this recorder wrote, by namespace/name, with their count: a repeat is one patch, no read. */
  readonly #counts = new BoundedMap<string, number>(REMEMBERED);

  constructor(
    private readonly client: KubeServer,
    private readonly component: string,
    /** Namespace for Events about cluster-scoped objects (default `default`). */
    private readonly clusterNamespace = "default",
  ) {}

  async record(obj: KubeObject, type: "Normal" | "Warning", reason: string, message: string): Promise<void> {
    const ns = obj.metadata.namespace ?? this.clusterNamespace;
    const h = createHash("sha256")
      .update(`${obj.metadata.uid ?? ""}\0${reason}\0${message}`)
      .digest("hex")
      .slice(0, 10);
    const name = `${obj.metadata.name}.${h}`.slice(0, 253);
    const key = `${ns}/${name}`;
    const t = now();
    const known = this.#counts.get(key);
    if (known !== undefined) {
      try {
        await this.bump(name, ns, known + 1, t);
        return;
      } catch (e) {
        if (!isNotFound(e)) throw e;
        this.#counts.delete(key); // expired (Events live an hour) or deleted: made again
      }
    }
    try {
      await this.client.create({
        apiVersion: "v1",
        kind: "Event",
        metadata: { name, namespace: ns },
        involvedObject: {
          apiVersion: obj.apiVersion,
          kind: obj.kind,
          name: obj.metadata.name,
          namespace: obj.metadata.namespace,
          uid: obj.metadata.uid,
        },
        type,
        reason,
        message: safeMessage(message).slice(0, 1024),
        source: { component: this.component },
        firstTimestamp: t,
        lastTimestamp: t,
        count: 1,
        reportingComponent: this.component,
        reportingInstance: this.component,
      });
      this.#counts.set(key, 1);
    } catch (e) {
      if (!isConflict(e)) throw e;
      // written before (by an earlier process or replica): its count is read once
      const old = await this.client.get<KubeObject & { count?: number }>("v1", "Event", name, ns);
      await this.bump(name, ns, (old.count ?? 1) + 1, t);
    }
  }

  private async bump(name: string, ns: string, count: number, t: string): Promise<void> {
    await this.client.mergePatch("v1", "Event", name, { count, lastTimestamp: t }, { namespace: ns });
    this.#counts.set(`${ns}/${name}`, count);
  }

  /** Records without letting a failure to write the Event fail the caller. */
  emit(
    obj: KubeObject,
    type: "Normal" | "Warning",
    reason: string,
    message: string,
    onError?: (e: unknown) => void,
  ): void {
    this.record(obj, type, reason, message).catch((e) => onError?.(e));
  }
}
