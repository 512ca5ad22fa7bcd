/**
 * What the resolver's controller resolves over: the cluster's Kubernetes and OpenShift versions, the
 * catalogs the ClusterCatalogs serve, the installed operators (the package Instances the resolveset
 * provisioner made, with their Bundles' recorded properties), and the InputClasses with the cluster's
 * versions applied to their constraints.
 */
import type { KubeServer, KubeObject } from "../kube/client.js";
import type { Informer } from "../kube/informer.js";
import type { Bundle, Instance } from "../rukpak/api.js";
import type { CatalogController } from "../catalogd/catalogs.js";
import type { InputClass as ResolverClass, InstalledOperator } from "../../resolve/index.js";
import type { JsonValue } from "../../fbc/types.js";
import type { GroupCondition as NewCondition } from "./reasons.js";
import type { CatalogContent, ContentCatalog } from "./resolverunner.js";
import { parsePropertiesAnnotation } from "./resolvesetwriter.js";
import {
  ANNOTATION_BUNDLE,
  ANNOTATION_CATALOG,
  ANNOTATION_CHANNEL,
  ANNOTATION_PROPERTIES,
  ANNOTATION_PROPERTIES_HASH,
  propertiesHash,
  ANNOTATION_VERSION,
  LABEL_PACKAGE,
  type InputClass,
} from "./api.js";

export interface ClusterVersions {
  kube?: string;
  ocp?: string;
}

function versionOf(text: unknown): { major: number; minor: number } | undefined {
  const m = /(\d+)\.(\d+)/.exec(String(text ?? ""));
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

function atLeast(have: string, want: string): boolean {
  const a = versionOf(have);
  const b = versionOf(want.replace(/^\s*>=?\s*/, ""));
  if (!a || !b) return true;
  return a.major > b.major || (a.major === b.major && a.minor >= b.minor);
}

/** The cluster's Kubernetes version (`/version`) and OpenShift version (a ClusterVersion, when the API exists). */
export async function clusterVersions(client: KubeServer): Promise<ClusterVersions> {
  const v = await client
    .request<{ gitVersion?: string }>("GET", "/version")
    .catch(() => ({}) as { gitVersion?: string });
  let ocp: string | undefined;
  const cv = await client
    .tryGet<KubeObject & { status?: { desired?: { version?: string } } }>(
      "config.openshift.io/v1",
      "ClusterVersion",
      "version",
    )
    .catch(() => undefined);
  if (cv?.status?.desired?.version) ocp = cv.status.desired.version;
  return { kube: v.gitVersion?.replace(/^v/, "").replace(/[-+].*$/, ""), ocp };
}

/**
 * What the ClusterCatalogs serve, for the resolver's worker: a revision whose lines are in a file is
 * given as that file's range (the worker reads it itself), one held in memory as its bytes; either only
 * when the worker does not hold that revision yet.
 */
export function servedCatalogs(catalogs: CatalogController): ContentCatalog[] {
  return catalogs.servedCatalogs().map((s) => {
    const { revision } = s;
    const content = (): CatalogContent => {
      const f = revision.jsonlFile;
      return f ? { file: { fd: f.fd, start: f.start, length: f.length }, holder: f.holder } : revision.jsonl;
    };
    return { name: s.name, priority: s.priority, digest: revision.digest, jsonl: content };
  });
}

/**
 * Installed operators: the package Instances the resolveset
 * provisioner made, with their Bundles' recorded properties.
 */
export function installedOperators(
  packageInstances: Informer<Instance>,
  packageBundles: Informer<Bundle>,
): { ops: InstalledOperator[]; problems: Map<string, string> } {
  const ops: InstalledOperator[] = [];
  const problems = new Map<string, string>();
  for (const inst of packageInstances.list()) {
    const pkg = inst.metadata.labels?.[LABEL_PACKAGE];
    const active = inst.status?.activeBundle;
    if (!pkg || !active || inst.metadata.deletionTimestamp) continue;
    const b = packageBundles.get(active);
    const a = b?.metadata.annotations ?? {};
    const op: InstalledOperator = {
      package: pkg,
      bundle: a[ANNOTATION_BUNDLE] ?? active,
      version: a[ANNOTATION_VERSION],
      catalog: a[ANNOTATION_CATALOG],
      channel: a[ANNOTATION_CHANNEL] || undefined,
    };
    const raw = a[ANNOTATION_PROPERTIES];
    if (raw !== undefined && a[ANNOTATION_PROPERTIES_HASH] !== propertiesHash(raw)) {
      // edited by a user: the resolver sees the edited properties
      const props = parsePropertiesAnnotation(raw);
      if (typeof props === "string")
        problems.set(
          active,
          `the olm.properties annotation of Bundle ${active} does ` +
            `not parse (${props}); the catalog's properties are used`,
        );
      else op.properties = props;
    }
    ops.push(op);
  }
  return { ops, problems };
}

/**
 * The InputClasses for the resolver, with the cluster's versions applied to their constraints; the
 * notes of each class (a version it cannot check) and why a class fails (the cluster is too old for it).
 */
export function resolverClasses(
  list: readonly InputClass[],
  versions: ClusterVersions,
): { classes: ResolverClass[]; classNotes: Map<string, NewCondition[]>; classFailures: Map<string, string> } {
  const out = {
    classes: [] as ResolverClass[],
    classNotes: new Map<string, NewCondition[]>(),
    classFailures: new Map<string, string>(),
  };
  for (const c of list) {
    const p = c.parameters ?? {};
    const notes: NewCondition[] = [];
    const constraints = [];
    const tooOld = (what: string, have: string, val: string) =>
      out.classFailures.set(
        c.metadata.name,
        `the cluster runs ${what} ${have} but InputClass ${c.metadata.name} requires ${val}`,
      );
    for (const k of p.constraints ?? []) {
      const val = String(k.value ?? "");
      if (k.type === "minKubeVersion") {
        if (!p.dryRun && versions.kube && !atLeast(versions.kube, val)) tooOld("Kubernetes", versions.kube, val);
        constraints.push({ type: k.type, value: val as JsonValue });
      } else if (k.type === "minOCPVersion") {
        if (!versions.ocp) {
          notes.push({
            type: "OpenShiftVersionChecked",
            status: "False",
            reason: "NoClusterVersion",
            message:
              `InputClass ${c.metadata.name} constrains the OpenShift version (${val}) but this cluster ` +
              `has no ClusterVersion (config.openshift.io/v1), so it cannot be checked; it is ignored`,
          });
          continue;
        }
        if (!p.dryRun && !atLeast(versions.ocp, val)) tooOld("OpenShift", versions.ocp, val);
        constraints.push({ type: k.type, value: val as JsonValue });
      } else constraints.push({ type: k.type, value: (k.value ?? null) as JsonValue });
    }
    out.classNotes.set(c.metadata.name, notes);
    out.classes.push({
      name: c.metadata.name,
      parameters: {
        force: p.force ?? false,
        generateInputsForDependencies: p.generateInputsForDependencies ?? false,
        dryRun: p.dryRun ?? false,
        trace: p.trace ?? false,
        dependencyPreference: p.dependencyPreference ?? "newest",
        constraints,
      },
    });
  }
  return out;
}
