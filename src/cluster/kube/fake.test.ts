/** The in-memory API server keeps kube-apiserver's contract (the same cases run on a real one). */
import { before, describe } from "node:test";
import { kubeContract, WIDGET } from "../../../test/kubecontract.js";
import { FakeKube } from "./fake.js";

describe("FakeKube keeps the API server's contract", () => {
  let api: FakeKube;
  before(async () => {
    api = new FakeKube([WIDGET]);
    await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "contract" } });
  });
  kubeContract(() => ({ api, ns: "contract" }));
});
