/**
 * What installing an Instance's objects takes, beside the approval: CRD upgrade safety, the
 * collision check (never adopt: only objects in the Instance's install record are its own), the
 * apply (namespaces, then CRDs until Established, then the rest, after a dry run of everything) and
 * the prune of what the new bundle no longer has (docs/security.md).
 */
import { isConflict, type KubeServer, type KubeObject } from "../kube/client.js";
import { findCondition, type Condition } from "../kube/conditions.js";
import { LABEL_INSTANCE, type Instance, type ObjectRef } from "./api.js";
import { neededNamespaces } from "./context.js";
import { crdGroupProblem, groupKindOf, ownKinds, servedBuiltInGroups } from "./crdgroups.js";
import { crdUpgradeProblems, existingObjectProblems } from "./crdsafety.js";
import { describeObject } from "./permissions.js";
import type { DesiredContent } from "./provisioner.js";
import { readInPass, type PassReads } from "./reads.js";
import { refKey, refOf, type InstallRecord } from "./record.js";

type ExistingCrd = KubeObject & {
  spec: { group: string; names: { kind: string }; versions: { name: string; served?: boolean }[] };
};

/** CRD changes that would break stored versions, fields or existing custom resources (`reads`: the pass's). */
export async function unsafeCrdChanges(
  client: KubeServer,
  objects: readonly KubeObject[],
  reads?: PassReads,
): Promise<string[]> {
  const unsafe: string[] = [];
  for (const o of objects) {
    if (o.kind !== "CustomResourceDefinition") continue;
    const existing = (await readInPass(client, refOf(o), reads)) as ExistingCrd | undefined;
    if (!existing) continue;
    const diff = crdUpgradeProblems(existing, o);
    unsafe.push(...diff);
    if (diff.length > 0) continue;
    // existing custom resources must stay valid under the new schema of their version
    for (const v of existing.spec.versions.filter((x) => x.served !== false)) {
      const { items } = await client
        .list(`${existing.spec.group}/${v.name}`, existing.spec.names.kind)
        .catch(() => ({ items: [] as KubeObject[] }));
      unsafe.push(...existingObjectProblems(o, v.name, items));
    }
  }
  return unsafe;
}

/**
 * Objects of the bundle that exist and are not this Instance's. This Instance's are those in its
 * record (applied, or pending from an interrupted pivot) that still name it as their owner, and
 * namespaces the controller created for it; before a record exists (an Instance installed by an
 * older opcat), objects labelled with it and owned by it. Each object is read once per pass: `reads`
 * holds what the pass's dry run or CRD safety read of it (the object as the API server had it then).
 */
export async function collisions(
  client: KubeServer,
  inst: Instance,
  record: InstallRecord | undefined,
  objects: readonly KubeObject[],
  reads?: PassReads,
): Promise<string[]> {
  const name = inst.metadata.name;
  const recorded = new Set([...(record?.applied ?? []), ...(record?.pending ?? [])].map(refKey));
  const out: string[] = [];
  for (const o of objects) {
    const cur = await readInPass(client, refOf(o), reads).catch(() => undefined);
    if (!cur) continue;
    const ownedByUs = (cur.metadata.ownerReferences ?? []).some((x) => x.uid === inst.metadata.uid);
    const where = describeObject(o);
    if (o.kind === "Namespace" && record?.namespaces?.includes(o.metadata.name)) continue;
    if (ownedByUs && (recorded.has(refKey(refOf(o))) || (!record && cur.metadata.labels?.[LABEL_INSTANCE] === name)))
      continue;
    const other = cur.metadata.labels?.[LABEL_INSTANCE];
    out.push(
      other && other !== name
        ? `${where} is managed by Instance ${other}`
        : `${where} exists and is not managed by Instance ${name}`,
    );
  }
  return out;
}

type CrdWithStatus = KubeObject & { status?: { conditions?: Condition[] } };

const established = (crd: CrdWithStatus): boolean =>
  findCondition(crd.status?.conditions, "Established")?.status === "True";

/**
 * Until the CRD is Established: the apply's answer first (an upgraded CRD is Established already and
 * costs no read), then read now and every 100 ms.
 */
async function waitEstablished(client: KubeServer, applied: CrdWithStatus): Promise<void> {
  const name = applied.metadata.name;
  const deadline = Date.now() + 60_000;
  let crd = applied;
  for (let reads = 0; !established(crd); reads++) {
    if (Date.now() > deadline) throw new Error(`CRD ${name} did not become Established within 60 s`);
    if (reads > 0) await new Promise((r) => setTimeout(r, 100));
    crd = await client.get<CrdWithStatus>("apiextensions.k8s.io/v1", "CustomResourceDefinition", name);
  }
}

/**
 * Applies the objects (as the Instance's own field manager): missing namespaces first (returned:
 * the ones made here), CRDs (waiting until Established), then the rest; a dry run of everything
 * first, so that a bundle that cannot be applied changes nothing. `pass`: what the pass knows already
 * (the served groups; `dryRun`: every object was dry-run in this pass, as its requesters, and passed:
 * the same question, so it is not asked again as the controllers).
 */
export async function install(
  client: KubeServer,
  desired: DesiredContent,
  fieldManager: string,
  known: readonly string[],
  pass: { served?: ReadonlySet<string>; dryRun?: boolean } = {},
): Promise<string[]> {
  const made: string[] = [];
  const needed = neededNamespaces(desired);
  const shipped = new Set(desired.objects.filter((o) => o.kind === "Namespace").map((o) => o.metadata.name));
  for (const ns of needed) {
    if (await client.tryGet("v1", "Namespace", ns)) continue;
    if (shipped.has(ns)) {
      await client.apply(desired.objects.find((o) => o.kind === "Namespace" && o.metadata.name === ns)!, {
        fieldManager,
      });
      continue;
    }
    await client
      .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } })
      .catch((e) => (isConflict(e) ? undefined : Promise.reject(e)));
    if (!known.includes(ns)) made.push(ns);
  }
  const crds = desired.objects.filter((o) => o.kind === "CustomResourceDefinition");
  const rest = desired.objects.filter((o) => o.kind !== "CustomResourceDefinition");
  // only objects of kinds this bundle's CRDs define in groups of their own wait for those CRDs: a
  // CRD claiming a built-in kind (or opcat's) never lets its objects skip the dry run (attack A6)
  const served = crds.length > 0 ? (pass.served ?? (await servedBuiltInGroups(client))) : new Set<string>();
  const problems = crds.map((c) => crdGroupProblem(c, served)).filter((x) => x !== undefined);
  if (problems.length > 0) throw new Error(problems.join("; "));
  const own = ownKinds(desired.objects, served);
  for (const o of desired.objects) {
    if (own.has(groupKindOf(o)) || pass.dryRun) continue;
    await client.apply(o, { dryRun: true, fieldManager });
  }
  const applied: CrdWithStatus[] = [];
  for (const c of crds) applied.push(await client.apply(c, { fieldManager }));
  for (const c of applied) await waitEstablished(client, c);
  for (const o of rest) await client.apply(o, { fieldManager });
  return made;
}

/**
 * Deletes what the new bundle no longer has: only objects of `before` (the record) that are not in
 * `target`, and only while they still name the Instance as their owner. `reads`: the pass's reads
 * (the judgement of these deletions read them): an object is deleted only as it was read (uid and
 * resourceVersion preconditions); one that changed since is read again and judged on what it is now.
 */
export async function prune(
  client: KubeServer,
  inst: Instance,
  before: readonly ObjectRef[],
  target: readonly ObjectRef[],
  reads?: PassReads,
): Promise<void> {
  const keep = new Set(target.map(refKey));
  const pruned = new Set<string>();
  for (const r of before) {
    const k = refKey(r);
    if (keep.has(k) || pruned.has(k)) continue;
    pruned.add(k);
    for (let again = false; ; again = true) {
      // the pass's read first; after a conflict (changed since), the object as it is now
      const live = await readInPass(client, r, again ? undefined : reads).catch(() => undefined);
      if (!live || !(live.metadata.ownerReferences ?? []).some((o) => o.uid === inst.metadata.uid)) break;
      const { uid, resourceVersion } = live.metadata;
      const done = await client
        .delete(r.apiVersion, r.kind, r.name, r.namespace, "Background", {
          uid,
          resourceVersion,
        })
        .then(
          () => true,
          (e) => (isConflict(e) && !again ? false : Promise.reject(e)),
        );
      if (done) break;
    }
  }
}
