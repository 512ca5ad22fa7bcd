/**
 * Kubernetes Events (core/v1) for controllers: one Event per distinct (object, reason, message),
 * with its count raised when the same thing happens again, as client-go's recorder does.
 */
import { createHash } from "node:crypto";
import { isNotFound, type KubeClient, type KubeObject } from "./client.js";
import { now } from "./conditions.js";

export class EventRecorder {
  constructor(
    private readonly client: KubeClient,
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
    const t = now();
    try {
      const old = await this.client.get<KubeObject & { count?: number }>("v1", "Event", name, ns);
      await this.client.mergePatch(
        "v1",
        "Event",
        name,
        { count: (old.count ?? 1) + 1, lastTimestamp: t },
        { namespace: ns },
      );
    } catch (e) {
      if (!isNotFound(e)) throw e;
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
        message: message.slice(0, 1024),
        source: { component: this.component },
        firstTimestamp: t,
        lastTimestamp: t,
        count: 1,
        reportingComponent: this.component,
        reportingInstance: this.component,
      });
    }
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
