/**
 * `deploymentConfig` applied to a generated Deployment, after operator-controller's
 * `applyCustomConfigToDeployment` (render/registryv1/generators/generators.go), which follows OLM v0's
 * `overrides/inject`: one named step per field, run in upstream's order by `applyDeploymentConfig`.
 * Container-level fields go to every container of the pod template (not to init containers).
 *
 * - env: a variable of the same name is replaced in place, others appended;
 * - envFrom, tolerations: appended unless an equal entry is there;
 * - volumes, volumeMounts: one of the same name is replaced in place, others appended (as OLM v0's
 *   current inject.go; its v0.39.0 appended duplicates);
 * - resources, nodeSelector: replaced;
 * - affinity: `{}` erases it; each sub-field given replaces that sub-field, an empty one erases it (only
 *   that one: OLM v0 erases the whole affinity for an empty podAntiAffinity, operator-controller does not);
 * - annotations: added to the Deployment's and the pod template's, never overriding one already there.
 */
import { isDeepStrictEqual } from "node:util";
import type { KubeObject } from "../../kube/client.js";
import type { DeploymentConfig } from "./config.js";
import { clone, isObj, type Json, type JsonObj } from "./json.js";

/** One rule: changes the Deployment in place. */
export type DeploymentConfigStep = (dep: KubeObject, dc: DeploymentConfig) => void;

function podSpec(dep: KubeObject): JsonObj {
  const spec = ((dep as JsonObj).spec ??= {}) as JsonObj;
  const template = (spec.template ??= {}) as JsonObj;
  return (template.spec ??= {}) as JsonObj;
}

function containers(dep: KubeObject): JsonObj[] {
  const cs = podSpec(dep).containers;
  return Array.isArray(cs) ? cs.filter(isObj) : [];
}

/** Entries of `add` merged into `list`: same `name` replaced in place, others appended. */
function byName(list: Json, add: JsonObj[]): Json[] {
  const out = Array.isArray(list) ? [...list] : [];
  for (const a of add) {
    const i = out.findIndex((x) => isObj(x) && x.name === a.name);
    if (i >= 0) out[i] = clone(a);
    else out.push(clone(a));
  }
  return out;
}

/** Entries of `add` appended to `list` unless an equal one is there. */
function unlessEqual(list: Json, add: Json[]): Json[] {
  const out = Array.isArray(list) ? [...list] : [];
  for (const a of add) if (!out.some((x) => isDeepStrictEqual(x, a))) out.push(clone(a));
  return out;
}

export const applyEnv: DeploymentConfigStep = (dep, dc) => {
  if (!dc.env?.length) return;
  for (const c of containers(dep)) c.env = byName(c.env, dc.env as JsonObj[]);
};

export const applyEnvFrom: DeploymentConfigStep = (dep, dc) => {
  if (!dc.envFrom?.length) return;
  for (const c of containers(dep)) c.envFrom = unlessEqual(c.envFrom, dc.envFrom);
};

export const applyVolumes: DeploymentConfigStep = (dep, dc) => {
  if (!dc.volumes?.length) return;
  const ps = podSpec(dep);
  ps.volumes = byName(ps.volumes, dc.volumes as JsonObj[]);
};

export const applyVolumeMounts: DeploymentConfigStep = (dep, dc) => {
  if (!dc.volumeMounts?.length) return;
  for (const c of containers(dep)) c.volumeMounts = byName(c.volumeMounts, dc.volumeMounts as JsonObj[]);
};

export const applyTolerations: DeploymentConfigStep = (dep, dc) => {
  if (!dc.tolerations?.length) return;
  const ps = podSpec(dep);
  ps.tolerations = unlessEqual(ps.tolerations, dc.tolerations);
};

export const applyResources: DeploymentConfigStep = (dep, dc) => {
  if (dc.resources === undefined || dc.resources === null) return;
  for (const c of containers(dep)) c.resources = clone(dc.resources);
};

export const applyNodeSelector: DeploymentConfigStep = (dep, dc) => {
  if (dc.nodeSelector === undefined || dc.nodeSelector === null) return;
  podSpec(dep).nodeSelector = clone(dc.nodeSelector);
};

const len = (v: Json) => (Array.isArray(v) ? v.length : 0);

/** Whether an affinity sub-field says nothing (upstream's isNodeAffinityEmpty and friends). */
export function affinityTermEmpty(key: string, v: Json): boolean {
  if (!isObj(v)) return true;
  const required = v.requiredDuringSchedulingIgnoredDuringExecution;
  const requiredEmpty =
    key === "nodeAffinity" ? !isObj(required) || len(required.nodeSelectorTerms) === 0 : len(required) === 0;
  return requiredEmpty && len(v.preferredDuringSchedulingIgnoredDuringExecution) === 0;
}

const AFFINITY_KEYS = ["nodeAffinity", "podAffinity", "podAntiAffinity"] as const;

export const applyAffinity: DeploymentConfigStep = (dep, dc) => {
  const want = dc.affinity as JsonObj | undefined | null;
  if (want === undefined || want === null) return;
  const ps = podSpec(dep);
  const given = AFFINITY_KEYS.filter((k) => want[k] !== undefined && want[k] !== null);
  if (given.length === 0) {
    delete ps.affinity;
    return;
  }
  const cur: JsonObj = isObj(ps.affinity) ? { ...ps.affinity } : {};
  for (const k of given) {
    if (affinityTermEmpty(k, want[k])) delete cur[k];
    else cur[k] = clone(want[k]);
  }
  if (AFFINITY_KEYS.every((k) => affinityTermEmpty(k, cur[k]))) delete ps.affinity;
  else ps.affinity = cur;
};

/** `add` into `target`, keeping what `target` has. */
function addMissing(target: Record<string, string> | undefined, add: Record<string, string>): Record<string, string> {
  const out = { ...(target ?? {}) };
  for (const [k, v] of Object.entries(add)) if (!(k in out)) out[k] = v;
  return out;
}

export const applyAnnotations: DeploymentConfigStep = (dep, dc) => {
  if (!dc.annotations || Object.keys(dc.annotations).length === 0) return;
  dep.metadata.annotations = addMissing(dep.metadata.annotations, dc.annotations);
  const template = (((dep as JsonObj).spec as JsonObj).template ??= {}) as JsonObj;
  const meta = (template.metadata ??= {}) as JsonObj;
  meta.annotations = addMissing(meta.annotations as Record<string, string> | undefined, dc.annotations);
};

/** The steps in upstream's order. */
export const DEPLOYMENT_CONFIG_STEPS: DeploymentConfigStep[] = [
  applyEnv,
  applyEnvFrom,
  applyVolumes,
  applyVolumeMounts,
  applyTolerations,
  applyResources,
  applyNodeSelector,
  applyAffinity,
  applyAnnotations,
];

/** `dc` applied to the Deployment `dep` (in place); nothing when there is no configuration. */
export function applyDeploymentConfig(dep: KubeObject, dc: DeploymentConfig | undefined): void {
  if (!dc) return;
  for (const step of DEPLOYMENT_CONFIG_STEPS) step(dep, dc);
}
