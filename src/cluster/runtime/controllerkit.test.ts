/**
 * What the controllers' table tests (catalogd/catalogs.test.ts, operators/operator.test.ts, …) run on:
 * the in-memory API server (kube/fake.ts) serving the kinds a controller reads, handed to the real
 * controller as its client, whose informers list and watch it as they would kube-apiserver; and
 * catalog images written as OCI layouts on disk from small FBC texts, which a ClusterCatalog pulls as
 * `oci:<dir>:<tag>`. The fake has no RBAC evaluation: impersonated requests and access reviews are
 * judged by its list of allowed users. (No tests of its own.)
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildCatalogImage, outputImage } from "../../image/index.js";
import type { KubeObject } from "../kube/client.js";
import type { FakeKube, FakeResource } from "../kube/fake.js";
import type { WorkQueue } from "../kube/queue.js";

/** A cluster-scoped custom resource with a status subresource and generations. */
export const customResource = (apiVersion: string, kind: string, plural: string): FakeResource => ({
  apiVersion,
  kind,
  resource: `${plural}.${apiVersion.split("/")[0]}`,
  namespaced: false,
  statusSubresource: true,
  generation: true,
});

/**
 * Resolves once the queues are idle: nothing queued or being processed after the pending watch events
 * are delivered (a key waiting for a retry or a requeue is not waited for).
 */
export async function settled(...queues: WorkQueue[]): Promise<void> {
  let quiet = 0;
  while (quiet < 3) {
    await new Promise((r) => setImmediate(r));
    quiet = queues.some((q) => q.busy) ? 0 : quiet + 1;
  }
}

export interface KubeEvent extends KubeObject {
  involvedObject: { name: string };
  type: string;
  reason: string;
  message: string;
  count: number;
}

/** The Events recorded about `name`: `type reason` each. */
export async function eventsOf(api: FakeKube, name: string): Promise<string[]> {
  const all = await api.list<KubeEvent>("v1", "Event");
  return all.items.filter((e) => e.involvedObject.name === name).map((e) => `${e.type} ${e.reason}`);
}

/** A condition of an object's status, as `status reason`, and its message. */
export function condition(o: KubeObject | undefined, type: string): { is?: string; message?: string } {
  const cs = ((o?.status as { conditions?: { type: string; status: string; reason: string; message: string }[] })
    ?.conditions ?? []) as { type: string; status: string; reason: string; message: string }[];
  const c = cs.find((x) => x.type === type);
  return c ? { is: `${c.status} ${c.reason}`, message: c.message } : {};
}

/** FBC blobs (one JSON line each) of package `pkg`. */
export const fbc = {
  pkg: (pkg: string, defaultChannel: string | undefined = "stable") =>
    JSON.stringify({ schema: "olm.package", name: pkg, ...(defaultChannel ? { defaultChannel } : {}) }),
  /** A channel whose entries each replace the one before. */
  channel: (pkg: string, versions: string[], name = "stable") =>
    JSON.stringify({
      schema: "olm.channel",
      name,
      package: pkg,
      entries: versions.map((v, i) => ({
        name: `${pkg}.v${v}`,
        ...(i > 0 ? { replaces: `${pkg}.v${versions[i - 1]}` } : {}),
      })),
    }),
  /** A bundle; `requires` names packages it depends on (any version). */
  bundle: (pkg: string, v: string, requires: string[] = []) =>
    JSON.stringify({
      schema: "olm.bundle",
      name: `${pkg}.v${v}`,
      package: pkg,
      image: `example.com/${pkg}:v${v}`,
      properties: [
        { type: "olm.package", value: { packageName: pkg, version: v } },
        ...requires.map((r) => ({ type: "olm.package.required", value: { packageName: r, versionRange: ">=0.0.0" } })),
      ],
    }),
  /** A whole package: its blob, channel `stable` of `versions` and their bundles. */
  package: (pkg: string, versions: string[], requires: string[] = []) =>
    [fbc.pkg(pkg), fbc.channel(pkg, versions), ...versions.map((v) => fbc.bundle(pkg, v, requires))].join("\n"),
};

/**
 * Writes a catalog image of the FBC text `content` into the OCI layout `<tmp>/<layout>` under `tag`:
 * its reference (`oci:<dir>:<tag>`) and manifest digest.
 */
export async function catalogImage(
  tmp: string,
  content: string,
  layout = "layout",
  tag = "v1",
): Promise<{ ref: string; digest: string }> {
  const dir = mkdtempSync(join(tmp, "fbc-"));
  mkdirSync(join(dir, "catalog"));
  writeFileSync(join(dir, "catalog", "catalog.json"), content);
  const ref = `oci:${join(tmp, layout)}:${tag}`;
  const out = await outputImage(buildCatalogImage(dir), ref);
  return { ref, digest: out.split("@").pop() ?? "" };
}
