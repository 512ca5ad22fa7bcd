/** kube-apiserver itself answers the contract the in-memory fake keeps (test/kubecontract.ts). */
import { after, before, describe } from "node:test";
import type { KubeClient, KubeObject } from "../../src/cluster/kube/client.js";
import { kubeContract, WIDGET_CRD } from "../kubecontract.js";
import { clientAs, clusterKubeconfig, waitFor } from "./harness.js";

const cluster = clusterKubeconfig();
const NS = `contract-${process.pid}`;

describe("a real API server keeps the contract the fake keeps", { skip: cluster.skip || undefined }, () => {
  let admin: KubeClient;
  before(async () => {
    if (cluster.skip !== false) return;
    admin = clientAs(cluster.kubeconfig, "admin");
    await admin.apply(WIDGET_CRD as unknown as KubeObject);
    await waitFor(
      admin,
      "apiextensions.k8s.io/v1",
      "CustomResourceDefinition",
      WIDGET_CRD.metadata.name,
      (c) =>
        (
          (c as { status?: { conditions?: { type: string; status: string }[] } } | undefined)?.status?.conditions ?? []
        ).some((x) => x.type === "Established" && x.status === "True"),
      "established",
    );
    await admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  });
  after(async () => {
    await admin?.delete("v1", "Namespace", NS).catch(() => {});
    await admin
      ?.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", WIDGET_CRD.metadata.name)
      .catch(() => {});
    admin?.close();
  });
  kubeContract(() => ({ api: admin, ns: NS }));
});
