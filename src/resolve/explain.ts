/**
 * Why a resolution failed, in sentences a person reads once: the solver's minimal set of conflicting
 * constraints, with every root cause stated once (the bundles it applies to listed together, in semver
 * order) and what would fix it. Used for the ResolutionFailed condition of `opcat resolve` and of the
 * cluster's Inputs alike.
 */
import { withMessage, type AppliedConstraint, type Constraint } from "./sat/index.js";
import type { Entity } from "./catalog.js";

/**
 * A sentence about one bundle: the bundle, the rest of the sentence, what would fix it, and what else would
 * (said only when the sentence does not apply to every candidate, e.g. "ask for another version").
 */
interface Cause {
  subject: Entity;
  text: string;
  fix?: string;
  orElse?: string;
}

const causes = new WeakMap<Constraint, Cause>();
const offers = new WeakMap<Constraint, { who: string; ids: Set<string> }>();

/**
 * Records that `constraint` lists the candidates of `who` (e.g. "input etcd"): a cause that applies to
 * exactly these bundles is then explained as "every candidate of input etcd …".
 */
export function offering(constraint: Constraint, who: string, candidates: readonly Entity[]): Constraint {
  offers.set(constraint, { who, ids: new Set(candidates.map((e) => e.id)) });
  return constraint;
}

/**
 * `constraint` explained as "`subject` `text`" (e.g. "etcd.v1 (c) is deprecated"). An explanation
 * names each distinct `text` once, for every bundle it applies to, followed by what would fix it: `fix`,
 * and `orElse` unless the sentence applies to every candidate.
 */
export function because(
  constraint: Constraint,
  subject: Entity,
  text: string,
  fix?: { fix?: string; orElse?: string },
): Constraint {
  const c = withMessage(constraint, `${subject.id} ${text}`);
  causes.set(c, { subject, text, ...fix });
  return c;
}

/** "a", "a and b", "a, b and c". */
export function listText(names: readonly string[]): string {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** Bundles by package, then semver (lowest first; unparsable versions by text), then catalog. */
export function bySemver<T extends Pick<Entity, "package" | "version" | "versionText" | "catalog">>(
  list: readonly T[],
): T[] {
  return [...list].sort((a, b) => {
    if (a.package !== b.package) return a.package < b.package ? -1 : 1;
    const v =
      a.version && b.version
        ? a.version.compare(b.version)
        : a.versionText === b.versionText
          ? 0
          : a.versionText < b.versionText
            ? -1
            : 1;
    if (v !== 0) return v;
    return a.catalog === b.catalog ? 0 : a.catalog < b.catalog ? -1 : 1;
  });
}

/**
 * The ResolutionFailed message for a minimal unsatisfiable set: each sentence once, in the solver's
 * order; sentences made with {@link because} that differ only in their bundle are joined ("each of a, b
 * and c requires …"), with what would fix them.
 */
export function explainUnsat(applied: readonly AppliedConstraint[]): string {
  const parts: string[] = [];
  const seen = new Set<string>();
  const groups = new Map<string, { subjects: Entity[]; cause: Cause; at: number }>();
  const offered: { who: string; ids: Set<string> }[] = [];
  for (const ac of applied) {
    const o = offers.get(ac.constraint);
    if (o && o.ids.size > 1) offered.push(o);
    const cause = causes.get(ac.constraint);
    if (!cause) {
      const s = String(ac);
      if (!seen.has(s)) parts.push(s);
      seen.add(s);
      continue;
    }
    let g = groups.get(cause.text);
    if (!g) {
      g = { subjects: [], cause, at: parts.length };
      groups.set(cause.text, g);
      parts.push("");
    }
    if (!g.subjects.includes(cause.subject)) g.subjects.push(cause.subject);
  }
  for (const [text, g] of groups) {
    const ids = bySemver(g.subjects).map((e) => e.id);
    const all = offered.find((o) => o.ids.size === ids.length && ids.every((id) => o.ids.has(id)));
    const who = all ? `every candidate of ${all.who}` : ids.length === 1 ? ids[0] : `each of ${listText(ids)}`;
    const fixes = [g.cause.fix, all ? undefined : g.cause.orElse].filter((f) => f !== undefined);
    parts[g.at] = `${who} ${text}${fixes.length > 0 ? ` (to fix: ${fixes.join(", or ")})` : ""}`;
  }
  return `unable to find a solution that matches the constraints: ${parts.join("; ")}`;
}
