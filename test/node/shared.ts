/** What the node tests share: the restricted security context, kubectl, and "Deployment Available". */
import { homedir } from "node:os";
import { join } from "node:path";
import type { KubeObject } from "../../src/cluster/client.js";

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
