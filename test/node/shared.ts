/** What the node tests share: the restricted security context, kubectl, and "Deployment Available". */
import { homedir } from "node:os";
import { join } from "node:path";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";

/** The kubectl built with the test cluster (the machine's may be another version). */
export const KUBECTL = join(
  process.env.OPCAT_KUBE_CACHE ?? join(homedir(), ".cache", "opcat", "kube"),
  `v${process.env.KUBE_VERSION ?? "1.35.4"}`,
  "bin",
  "kubectl",
);

/** The restricted container security context every test Pod uses (what opcat's manifests use too). */
export const RESTRICTED = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ["ALL"] },
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  seccompProfile: { type: "RuntimeDefault" },
};

export type Deployment = KubeObject & {
  status?: { conditions?: { type: string; status: string }[]; readyReplicas?: number; availableReplicas?: number };
};

export function available(d: Deployment | undefined): boolean {
  return d?.status?.conditions?.some((c) => c.type === "Available" && c.status === "True") === true;
}

type Slice = KubeObject & { endpoints?: { conditions?: { ready?: boolean } }[] };
type Endpoints = KubeObject & { subsets?: { addresses?: unknown[] }[] };

/**
 * Waits until Service `name` has `want` ready endpoints in both its EndpointSlices (what kube-proxy
 * routes by) and its v1 Endpoints (what the API server's aggregator routing reads to call a webhook
 * or an APIService behind a Service): a Deployment that is Available can still have neither.
 * Bounded; on time-out the error says what both showed.
 */
export async function serviceReady(
  admin: KubeClient,
  namespace: string,
  name: string,
  want = 1,
  timeoutMs = 60_000,
): Promise<void> {
  const count = async () => {
    const { items } = await admin.list<Slice>("discovery.k8s.io/v1", "EndpointSlice", {
      namespace,
      labelSelector: `kubernetes.io/service-name=${name}`,
    });
    const slices = items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready).length;
    const ep = await admin.tryGet<Endpoints>("v1", "Endpoints", name, namespace);
    const endpoints = (ep?.subsets ?? []).flatMap((s) => s.addresses ?? []).length;
    return { slices, endpoints };
  };
  const deadline = Date.now() + timeoutMs;
  let seen = await count();
  while (seen.slices < want || seen.endpoints < want) {
    if (Date.now() > deadline)
      throw new Error(
        `Service ${namespace}/${name}: ${seen.slices} ready EndpointSlice endpoints and ` +
          `${seen.endpoints} Endpoints addresses after ${timeoutMs} ms (want ${want})`,
      );
    await new Promise((r) => setTimeout(r, 100));
    seen = await count();
  }
}
