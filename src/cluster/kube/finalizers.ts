/**
 * Finalizers: a controller that must clean something up before an object goes away adds its
 * finalizer, and removes it once the cleanup is done. Both writes are conditional on the object's
 * resourceVersion (a merge patch carrying it), so a concurrent change is never overwritten.
 */
import type { KubeServer, KubeObject } from "./client.js";

export function hasFinalizer(o: KubeObject, name: string): boolean {
  return (o.metadata.finalizers ?? []).includes(name);
}

async function setFinalizers<T extends KubeObject>(client: KubeServer, o: T, finalizers: string[]): Promise<T> {
  return client.mergePatch<T>(
    o.apiVersion,
    o.kind,
    o.metadata.name,
    { metadata: { finalizers, resourceVersion: o.metadata.resourceVersion } },
    { namespace: o.metadata.namespace },
  );
}

export async function addFinalizer<T extends KubeObject>(client: KubeServer, o: T, name: string): Promise<T> {
  if (hasFinalizer(o, name)) return o;
  return setFinalizers(client, o, [...(o.metadata.finalizers ?? []), name]);
}

export async function removeFinalizer<T extends KubeObject>(client: KubeServer, o: T, name: string): Promise<T> {
  if (!hasFinalizer(o, name)) return o;
  return setFinalizers(
    client,
    o,
    (o.metadata.finalizers ?? []).filter((f) => f !== name),
  );
}
