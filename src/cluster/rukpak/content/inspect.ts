/** What unpacked content is: its format (registry+v1 or plain) and its objects. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { isBundleDirectory, readBundleDirectory } from "../../../bundle/index.js";
import { parseKubeDocuments } from "../manifests.js";
import type { KubeObject } from "../../kube/client.js";

import { UnpackError, type ContentLimits } from "./types.js";
import { scanTree } from "./store.js";
export function inspect(
  dir: string,
  limits: ContentLimits = {},
): { format: "registry+v1" | "plain"; objects: string[] } {
  scanTree(dir, limits);
  checkObjectSizes(dir, limits.maxObjectBytes ?? Infinity);
  if (isBundleDirectory(dir)) {
    let b;
    try {
      b = readBundleDirectory(dir);
    } catch (e) {
      throw new UnpackError("InvalidBundle", `invalid registry+v1 bundle: ${(e as Error).message}`, false);
    }
    return { format: "registry+v1", objects: b.objects.map((o) => objectPath(o.object as unknown as KubeObject)) };
  }
  return { format: "plain", objects: readPlainObjects(dir).map(objectPath) };
}

/** A plain bundle: every YAML/JSON document in `manifests/` (no subdirectories), at least one object. */
export function readPlainObjects(dir: string): KubeObject[] {
  const m = join(dir, "manifests");
  if (!existsSync(m) || !statSync(m).isDirectory())
    throw new UnpackError("InvalidBundle", "invalid bundle: no manifests/ directory", false);
  const out: KubeObject[] = [];
  for (const e of readdirSync(m, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.isDirectory())
      throw new UnpackError(
        "InvalidBundle",
        `subdirectories are not allowed within the "manifests" directory of the bundle: found "manifests/${e.name}"`,
        false,
      );
    if (!e.isFile() || e.name.startsWith(".")) continue;
    try {
      out.push(...parseKubeDocuments(readFileSync(join(m, e.name), "utf8"), `manifests/${e.name}`));
    } catch (err) {
      throw new UnpackError("InvalidBundle", (err as Error).message, false);
    }
  }
  if (out.length === 0)
    throw new UnpackError(
      "InvalidBundle",
      "invalid bundle: found zero objects: plain bundles are required to contain at least one object",
      false,
    );
  return out;
}

function objectPath(o: KubeObject): string {
  return `/objects/${o.kind}/${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name ?? ""}`;
}

/** Refuses a file under `manifests/` larger than `maxObjectBytes` (the class's `maxObjectSize`). */
export function checkObjectSizes(dir: string, maxObjectBytes: number): void {
  const m = join(dir, "manifests");
  if (!Number.isFinite(maxObjectBytes) || !existsSync(m) || !statSync(m).isDirectory()) return;
  for (const e of readdirSync(m)) {
    const st = statSync(join(m, e));
    if (st.isFile() && st.size > maxObjectBytes)
      throw new UnpackError(
        "ObjectTooLarge",
        `manifests/${e} has ${st.size} bytes, more than the class's maxObjectSize of ${maxObjectBytes} bytes`,
        false,
      );
  }
}
