/**
 * What the step tables of the RukPak controllers (bundle.test.ts, instance.test.ts) run on: the
 * in-memory API server (kube/fake.ts) serving RukPak's kinds, caches fed by its changes as informers
 * are by a watch, a content store in a temporary directory, the built-in provisioners, and the real
 * signing key, record store and work queues. The SubjectAccessReviews the steps ask are answered
 * here from a list of users allowed everything, and `GET /apis` lists the groups of the kinds it
 * serves and RBAC's (which the steps' CRD checks expect served). (No tests of its own.)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeClient, KubeObject } from "../kube/client.js";
import { FakeKube, mapListsOf, type Admission, type FakeResource } from "../kube/fake.js";
import { WorkQueue } from "../kube/queue.js";
import {
  ANNOTATION_REQUESTER,
  API_VERSION,
  PLAIN_PROVISIONER,
  type Bundle,
  type BundleSpec,
  type Instance,
  type ProvisionerClass,
  rukpakCrdObjects,
} from "./api.js";
import { bundleSteps, reconcileBundle, UnpackSlots } from "./bundle.js";
import type { ObjectCache, RukpakContext } from "./context.js";
import { builtinProvisioners } from "./controller.js";
import { RecordStore } from "./record.js";
import { ANNOTATION_REQUESTER_SIGNATURE, requesterParts, SigningKey } from "./trust.js";

/** A RukPak kind as the fake serves it, its map lists (conditions by type) from its CRD. */
const crd = (kind: string, plural: string, status = true): FakeResource => ({
  apiVersion: API_VERSION,
  kind,
  resource: `${plural}.rukpak.io`,
  namespaced: false,
  statusSubresource: status,
  generation: true,
  mapLists: mapListsOf(rukpakCrdObjects().find((c) => c.metadata.name === `${plural}.rukpak.io`)),
});

export const RESOURCES: FakeResource[] = [
  crd("ProvisionerClass", "provisionerclasses", false),
  crd("Bundle", "bundles"),
  crd("Instance", "instances"),
  {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    resource: "customresourcedefinitions.apiextensions.k8s.io",
    namespaced: false,
    generation: true,
  },
];

export const SELF = "system:serviceaccount:opcat-system:opcat";
export const ALICE = "alice";
export const NAMESPACE = "opcat-system";

/** A cache of one kind fed by the fake's changes (as an informer is by its watch). */
function cacheOf<T extends KubeObject>(api: FakeKube, apiVersion: string, kind: string): ObjectCache<T> {
  const m = new Map<string, T>();
  api.onChange((k, e) => {
    if (k !== `${apiVersion}/${kind}`) return;
    if (e.type === "DELETED") m.delete(e.object.metadata.name);
    else m.set(e.object.metadata.name, e.object as T);
  });
  return { get: (n) => m.get(n), list: () => [...m.values()] };
}

/** The fake, with these answers to two requests (see the module comment). */
function serverOf(api: FakeKube, allowed: Set<string>): KubeClient {
  const groups = [...new Set(RESOURCES.map((r) => r.apiVersion.split("/")[0]))].map((name) => ({ name }));
  const request = async (method: string, path: string, opts: { body?: unknown } = {}) => {
    if (method === "GET" && path === "/apis") return { groups: [...groups, { name: "rbac.authorization.k8s.io" }] };
    if (method === "POST" && path.endsWith("/subjectaccessreviews")) {
      const user = (opts.body as { spec: { user: string } }).spec.user;
      return { status: { allowed: allowed.has(user) } };
    }
    throw new Error(`the fake serves no ${method} ${path}`);
  };
  return Object.assign(api, { request }) as unknown as KubeClient;
}

export interface Cluster {
  api: FakeKube;
  ctx: RukpakContext;
  slots: UnpackSlots;
  bundleQueue: WorkQueue;
  instanceQueue: WorkQueue;
  /** Events emitted: [object name, type, reason]. */
  events: [string, string, string][];
  /** Users whose SubjectAccessReviews are allowed. */
  allowed: Set<string>;
}

/** A cluster with the ProvisionerClass `plain` (approval `approval`) and ConfigMap `manifests`. */
export async function cluster(approval = "AllowAll"): Promise<Cluster> {
  const api = new FakeKube(RESOURCES);
  const allowed = new Set([ALICE]);
  const client = serverOf(api, allowed);
  const classes = cacheOf<ProvisionerClass>(api, API_VERSION, "ProvisionerClass");
  const events: Cluster["events"] = [];
  const bundleQueue = new WorkQueue();
  const instanceQueue = new WorkQueue();
  const ctx: RukpakContext = {
    client,
    key: new SigningKey(Buffer.alloc(32, 7)),
    self: SELF,
    stateDir: mkdtempSync(join(tmpdir(), "opcat-steps-")),
    log: () => {},
    records: new RecordStore(api, NAMESPACE),
    protectedSet: { namespace: NAMESPACE, crds: new Set(["bundles.rukpak.io"]), clusterNames: new Set() },
    provisioners: builtinProvisioners(),
    bundles: cacheOf<Bundle>(api, API_VERSION, "Bundle"),
    instances: cacheOf<Instance>(api, API_VERSION, "Instance"),
    events: { emit: (o, type, reason) => void events.push([o.metadata.name, type, reason]) },
    bundleQueue,
    instanceQueue,
    appliedHere: new Map(),
    ours: (c) => (c ? classes.get(c) : undefined),
  };
  await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } });
  await api.create<ProvisionerClass>({
    apiVersion: API_VERSION,
    kind: "ProvisionerClass",
    metadata: { name: "plain" },
    provisioner: PLAIN_PROVISIONER,
    parameters: { approval },
  });
  await manifests(api, "manifests", { "cm.yaml": configMapYaml("shipped", "default") });
  return { api, ctx, slots: new UnpackSlots(3), bundleQueue, instanceQueue, events, allowed };
}

export function configMapYaml(name: string, namespace: string): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata:\n  a: "1"\n`;
}

/** A ConfigMap of manifests (what a `file://` Bundle mounts). */
export async function manifests(api: FakeKube, name: string, data: Record<string, string>): Promise<void> {
  await api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data });
}

/** What opcat's admission webhook records on RukPak objects: who last changed the spec, signed. */
export function recordRequester(key: SigningKey): Admission {
  return ({ operation, object, oldObject, userInfo }) => {
    if (object.apiVersion !== API_VERSION || (object.kind !== "Bundle" && object.kind !== "Instance")) return undefined;
    const spec = (object as { spec?: unknown }).spec;
    const annotations = { ...object.metadata.annotations };
    const keys = [ANNOTATION_REQUESTER, ANNOTATION_REQUESTER_SIGNATURE];
    if (operation === "CREATE" || JSON.stringify((oldObject as { spec?: unknown }).spec) !== JSON.stringify(spec)) {
      const { username, groups, uid, extra } = userInfo;
      const raw = JSON.stringify({ username, groups, ...(uid ? { uid } : {}), ...(extra ? { extra } : {}) });
      annotations[keys[0]] = raw;
      annotations[keys[1]] = key.sign(requesterParts(object.kind, object.metadata.name, spec, raw));
    } else
      for (const k of keys) {
        const old = oldObject?.metadata.annotations?.[k];
        if (old === undefined) delete annotations[k];
        else annotations[k] = old;
      }
    return { ...object, metadata: { ...object.metadata, annotations } };
  };
}

/** `o` as the admission webhook records it for `username` (a signed requester annotation). */
export function requestedBy<T extends KubeObject & { spec?: unknown }>(key: SigningKey, o: T, username: string): T {
  const raw = JSON.stringify({ username, groups: [] });
  const sig = key.sign(requesterParts(o.kind, o.metadata.name, o.spec, raw));
  const annotations = { ...o.metadata.annotations, [ANNOTATION_REQUESTER]: raw, [ANNOTATION_REQUESTER_SIGNATURE]: sig };
  return { ...o, metadata: { ...o.metadata, annotations } };
}

/** A plain Bundle of ConfigMap `cm`'s manifests, requested by alice. */
export function plainSpec(cm = "manifests"): BundleSpec {
  return {
    class: "plain",
    refs: ["file:///content"],
    volumeMounts: [{ mountPath: "/content/manifests", configMap: { name: cm, namespace: "default" } }],
  };
}

export async function createBundle(c: Cluster, name: string, spec = plainSpec(), labels = {}): Promise<Bundle> {
  const b: Bundle = { apiVersion: API_VERSION, kind: "Bundle", metadata: { name, labels }, spec };
  return c.api.create<Bundle>(requestedBy(c.ctx.key, b, ALICE));
}

/** A Bundle unpacked by the real reconcile (its content in the store, its status Done). */
export async function unpackedBundle(c: Cluster, name: string, spec = plainSpec(), labels = {}): Promise<Bundle> {
  await createBundle(c, name, spec, labels);
  await reconcileBundle(c.ctx, bundleSteps(c.ctx, c.slots), name);
  return c.api.get<Bundle>(API_VERSION, "Bundle", name);
}

export async function createInstance(c: Cluster, name: string, spec: Instance["spec"], by = ALICE): Promise<Instance> {
  const i: Instance = { apiVersion: API_VERSION, kind: "Instance", metadata: { name }, spec };
  return c.api.create<Instance>(requestedBy(c.ctx.key, i, by));
}
