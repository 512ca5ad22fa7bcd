/**
 * The SAT encoding of a group of units (the resolver file's header has the encoding in words): the
 * units' mandatory variables, one variable per reachable bundle and operand entry with its cluster
 * limits, deprecation and dependencies, and the uniqueness variables.
 */
import type { Version } from "../../semver/index.js";
import { PROPERTY_RELATED_IMAGE_BUNDLE } from "../../fbc/properties.js";
import {
  atMost,
  dependency,
  mandatory,
  prohibited,
  variable,
  withMessage,
  type Constraint,
  type Variable,
} from "../sat/index.js";
import { clusterFacts, isDeprecated, type CatalogSet, type Entity } from "../catalog.js";
import { entryText, SCHEMA_OPERAND, SCHEMA_RELATED_IMAGES, type OperandEntry } from "../operands.js";
import { because, bySemver, listText, offering } from "../explain.js";
import type { Candidates, Group } from "./candidates.js";
import { maxVersion, push, viaId, type InstalledOperators, type Unit } from "./units.js";

/**
 * The SAT encoding of one group: its units' variables (with "input via bundle" variables for
 * operand requests), one variable per bundle (cluster limits, deprecation, dependencies, required
 * entries) and per entry (supporting bundles), then the uniqueness variables (per entry key,
 * package, and GVK provided by several packages).
 */
export function encodeGroup(
  group: Group,
  candidates: Candidates,
  installedOps: InstalledOperators,
  set: CatalogSet,
): Variable[] {
  const installed = installedOps.byPackage;
  let kube: Version | undefined;
  let ocp: Version | undefined;
  for (const u of group.units) {
    kube = maxVersion(kube, u.cluster.kube);
    ocp = maxVersion(ocp, u.cluster.ocp);
  }
  const vars: Variable[] = [];
  const aux: Variable[] = [];
  for (const u of group.units) {
    const names = u.candidates.map((c) => c.id);
    // the sentences list candidates in semver order; the dependency keeps the preference order
    const sorted = bySemver(u.candidates).map((c) => c.id);
    if (u.operandChoices && u.candidates.length > 0) {
      // One variable per candidate: "the input is met by this bundle with these operands".
      const vias = u.candidates.map((c) => viaId(u, c));
      vars.push(
        variable(
          u.varId,
          withMessage(mandatory(), `input ${u.name} is requested`),
          offeringOf(
            u,
            withMessage(
              dependency(...vias),
              `input ${u.name} can be satisfied only by ${listText(sorted)}, each managing the operands it asks for`,
            ),
          ),
        ),
      );
      u.candidates.forEach((c, ci) => {
        const per = u.operandChoices?.get(c) ?? [];
        const cs: Constraint[] = [withMessage(dependency(c.id), `input ${u.name} through ${c.id} installs it`)];
        u.operandRequests.forEach((r, ri) => {
          const ids = (per[ri] ?? []).map((o) => o.id);
          cs.push(
            withMessage(
              dependency(...ids),
              `input ${u.name} asks for operand ${r.name}${r.version ? ` in version range ${r.version}` : ""}, ` +
                `which ${c.id} manages only as ${listText(ids)}`,
            ),
          );
        });
        aux.push(variable(vias[ci], ...cs));
      });
      continue;
    }
    const dep =
      u.candidates.length === 0
        ? withMessage(dependency(), u.emptyReason ?? `no bundle matches ${u.kind} ${u.name}`)
        : offeringOf(
            u,
            withMessage(
              dependency(...names),
              u.kind === "input"
                ? `input ${u.name} can be satisfied only by ${listText(sorted)}`
                : `installed operator ${u.name} can only stay at ` +
                    `${u.candidates.find((c) => installed.get(u.name)?.entity === c)?.id ?? "?"} ` +
                    `or move along its upgrade edges to ` +
                    `${listText(sorted.filter((n) => n !== installed.get(u.name)?.entity.id)) || "nothing"}`,
            ),
          );
    vars.push(
      variable(
        u.varId,
        withMessage(
          mandatory(),
          u.kind === "input" ? `input ${u.name} is requested` : `${installed.get(u.name)?.entity.name} is installed`,
        ),
        dep,
      ),
    );
  }
  vars.push(...aux);
  const byPkg = new Map<string, Entity[]>();
  const byGvk = new Map<string, Entity[]>();
  for (const e of group.entities) {
    const cs = [...clusterConstraints(e, kube, ocp), ...dependencyConstraints(e, candidates, set)];
    vars.push(variable(e.id, ...cs));
    push(byPkg, e.package, e);
    for (const g of e.provides) push(byGvk, g, e);
  }
  const byEntryKey = new Map<string, OperandEntry[]>();
  for (const o of group.entries) {
    const cs: Constraint[] = [];
    if (o.schema === SCHEMA_OPERAND) {
      const ids = candidates.supporters(o).map((c) => c.id);
      cs.push(
        ids.length === 0
          ? withMessage(
              dependency(),
              `${o.id} needs an operator that manages it, but no bundle in the catalogs supports ${o.name} ` +
                `${o.versionText} (olm.operand.supported)${o.package ? ` in package ${o.package}` : ""}`,
            )
          : withMessage(
              dependency(...ids),
              `${o.id} must be managed by an operator supporting ${o.name} ${o.versionText}: ${listText(ids)}`,
            ),
      );
    }
    vars.push(variable(o.id, ...cs));
    for (const k of o.keys) push(byEntryKey, k, o);
  }
  vars.push(...uniquenessVariables(byEntryKey, byPkg, byGvk));
  return vars;
}

/** `c`, recorded as listing the candidates of the unit (for the explanation of a failure). */
const offeringOf = (u: Unit, c: Constraint): Constraint =>
  offering(c, u.kind === "input" ? `input ${u.name}` : `installed operator ${u.name}`, u.candidates);

/** Prohibitions of a catalog bundle: a cluster too old (minKubeVersion) or new (maxOpenShiftVersion), deprecation. */
function clusterConstraints(e: Entity, kube: Version | undefined, ocp: Version | undefined): Constraint[] {
  if (e.virtual) return [];
  const cs: Constraint[] = [];
  // The facts (a CSV may have to be decoded) are only derived when a cluster is described.
  const f = kube || ocp ? clusterFacts(e) : undefined;
  const mkv = kube ? f?.minKube : undefined;
  if (kube && mkv && mkv.compare(kube) > 0)
    cs.push(
      because(
        prohibited(),
        e,
        `requires Kubernetes ${f?.minKubeVersion} or newer but the cluster runs ${kube.toString()}`,
        {
          fix: "upgrade the cluster",
          orElse: `ask for a version of ${e.package} that supports Kubernetes ${kube.toString()}`,
        },
      ),
    );
  const mov = ocp ? f?.maxOpenShift : undefined;
  if (ocp && mov && (ocp.major > mov.major || (ocp.major === mov.major && ocp.minor > mov.minor))) {
    const runs = `${ocp.major}.${ocp.minor}`;
    cs.push(
      because(prohibited(), e, `supports OpenShift up to ${f?.maxOpenShiftVersion} but the cluster runs ${runs}`, {
        orElse: `ask for a version of ${e.package} that supports OpenShift ${runs}`,
      }),
    );
  }
  if (isDeprecated(e))
    cs.push(
      because(prohibited(), e, "is deprecated", { orElse: `ask for another version or channel of ${e.package}` }),
    );
  return cs;
}

/** A bundle's dependencies on operators (required GVKs, packages, olm.constraint) and on operand entries. */
function dependencyConstraints(e: Entity, candidates: Candidates, set: CatalogSet): Constraint[] {
  const cs: Constraint[] = [];
  for (const { pred, cands } of candidates.dependencies(e)) {
    const ids = cands.map((c) => c.id);
    const text = `requires an operator ${pred.text}`;
    if (ids.length === 0) {
      const why = pred.error ? ` (${pred.error})` : pred.failureMessage ? `: ${pred.failureMessage}` : "";
      const fix = {
        fix: "add a catalog with an operator that satisfies it",
        orElse: `ask for another version of ${e.package}`,
      };
      cs.push(because(dependency(), e, `${text}, but no bundle in the catalogs satisfies it${why}`, fix));
    } else cs.push(because(dependency(...ids), e, `${text}, satisfied only by ${listText(ids)}`));
  }
  for (const { ref, cands } of candidates.required(e)) {
    const ids = cands.map((c) => c.id);
    const what = ref.type === PROPERTY_RELATED_IMAGE_BUNDLE ? `the related images ${ref.name}` : `operand ${ref.name}`;
    const text = `requires ${what} in version range ${ref.version} (${ref.type})`;
    if (ids.length === 0) {
      const schema = ref.type === PROPERTY_RELATED_IMAGE_BUNDLE ? SCHEMA_RELATED_IMAGES : SCHEMA_OPERAND;
      const have = set.operands(schema, ref.name).filter((o) => o.package === "" || o.package === e.package);
      const versions = [...new Set(have.map((o) => o.versionText))];
      const had = versions.length > 0 ? ` (the catalogs have ${listText(versions)})` : "";
      const fix = {
        fix: `add a catalog with a matching ${schema} entry`,
        orElse: `ask for another version of ${e.package}`,
      };
      cs.push(because(dependency(), e, `${text}, but no ${schema} entry in the catalogs matches it${had}`, fix));
    } else cs.push(because(dependency(...ids), e, `${text}, satisfied only by ${listText(ids)}`));
  }
  return cs;
}

/** At most one version per related-image name or operand version key, one bundle per package, one provider per GVK. */
function uniquenessVariables(
  byEntryKey: Map<string, OperandEntry[]>,
  byPkg: Map<string, Entity[]>,
  byGvk: Map<string, Entity[]>,
): Variable[] {
  const vars: Variable[] = [];
  for (const l of byEntryKey.values()) {
    if (l.length < 2) continue;
    const ids = l.map((o) => o.id);
    const o = l[0];
    if (o.schema === SCHEMA_RELATED_IMAGES) {
      vars.push(
        variable(
          `${o.schema} ${o.name} uniqueness`,
          withMessage(mandatory(), `there can be only one version of the related images ${o.name}`),
          withMessage(
            atMost(1, ...ids),
            `${listText(ids)} are versions of the related images ${o.name}, and only one of them can be installed`,
          ),
        ),
      );
    } else {
      vars.push(
        variable(
          `${entryText(o)}${o.package ? ` for package ${o.package}` : ""} uniqueness`,
          withMessage(mandatory(), `there can be only one ${entryText(o)}`),
          withMessage(
            atMost(1, ...ids),
            `${listText(ids)} are the same operand version from ` +
              `different catalogs, and only one of them can be installed`,
          ),
        ),
      );
    }
  }
  for (const [p, l] of byPkg) {
    if (l.length < 2) continue;
    const ids = l.map((e) => e.id);
    vars.push(
      variable(
        `package ${p} uniqueness`,
        withMessage(mandatory(), `there can be only one operator from package ${p}`),
        withMessage(
          atMost(1, ...ids),
          `${listText(bySemver(l).map((e) => e.id))} originate from package ${p}, and only one of them can be ` +
            `installed (to fix: ask for one version of ${p})`,
        ),
      ),
    );
  }
  for (const [g, l] of byGvk) {
    if (l.length < 2 || new Set(l.map((e) => e.package)).size < 2) continue;
    const ids = l.map((e) => e.id);
    const [group, version, kind] = g.split("/");
    const gt = `${kind} (${group}/${version})`;
    vars.push(
      variable(
        `${gt} uniqueness`,
        withMessage(mandatory(), `there can be only one provider of ${gt}`),
        withMessage(
          atMost(1, ...ids),
          `${listText(bySemver(l).map((e) => e.id))} provide ${gt}, and there can be only one provider of it ` +
            `(to fix: ask for only one of the packages ${listText([...new Set(l.map((e) => e.package))].sort())})`,
        ),
      ),
    );
  }
  return vars;
}
