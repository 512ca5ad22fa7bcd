/**
 * Kubernetes manifests in a file: every YAML or JSON document of the stream (the same YAML-or-JSON
 * stream decoder opcat uses for catalogs, apimachinery's rules), each an object with apiVersion,
 * kind and metadata.name. Empty documents are skipped.
 */
import { decodeStream } from "../../yaml/index.js";
import type { KubeObject } from "../kube/client.js";

export function parseKubeDocuments(text: string, file: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const item of decodeStream(text)) {
    if (item.kind === "error") throw new Error(`${file}:${item.line}: ${item.message}`);
    const v = item.value as unknown;
    if (v === null || v === undefined) continue;
    if (typeof v !== "object" || Array.isArray(v))
      throw new Error(`${file}:${item.line}: a manifest must be an object`);
    const o = v as Partial<KubeObject>;
    if (typeof o.apiVersion !== "string" || typeof o.kind !== "string" || typeof o.metadata?.name !== "string") {
      throw new Error(`${file}:${item.line}: a manifest needs apiVersion, kind and metadata.name`);
    }
    out.push(o as KubeObject);
  }
  return out;
}
