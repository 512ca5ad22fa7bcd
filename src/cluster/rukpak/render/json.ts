/** Small readers of untyped JSON (a CSV's spec, manifests) for the registry+v1 renderer. */
import type { KubeObject } from "../../kube/client.js";

export type Json = unknown;
export type JsonObj = Record<string, Json>;

export function isObj(v: Json): v is JsonObj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
export function objAt(v: Json, ...path: string[]): JsonObj | undefined {
  let cur: Json = v;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return isObj(cur) ? cur : undefined;
}
export function arrAt(v: Json, ...path: string[]): Json[] {
  let cur: Json = v;
  for (const p of path) {
    if (!isObj(cur)) return [];
    cur = cur[p];
  }
  return Array.isArray(cur) ? cur : [];
}
export function strAt(v: Json, ...path: string[]): string | undefined {
  let cur: Json = v;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return typeof cur === "string" ? cur : undefined;
}
export function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Drops `status` and the server-set metadata fields (in place). */
export function stripStatus(o: KubeObject): KubeObject {
  delete (o as Record<string, unknown>).status;
  const m = o.metadata ?? ({} as KubeObject["metadata"]);
  for (const k of ["creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"])
    delete (m as Record<string, unknown>)[k];
  o.metadata = m;
  return o;
}
