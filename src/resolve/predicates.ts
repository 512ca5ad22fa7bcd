/**
 * Dependency predicates over catalog entities, as OLM builds them from bundle properties:
 * `olm.gvk.required`, `olm.package.required` (blang ranges) and `olm.constraint` (`cel` with OLM's
 * `semver_compare`, `gvk`, `package`, `all`, `any`, `not`, `failureMessage`). Texts are OLM's.
 */
import { Environment, type ASTNode } from "@marcbachmann/cel-js";
import { RE2JS } from "re2js";
import { parseConstraint, type Constraint } from "../fbc/constraint.js";
import type { JsonValue } from "../fbc/types.js";
import { SemverError, tryParseRange, tryParseTolerant, type Range } from "../semver/index.js";
import { gvkKey, gvkText, type CatalogSet, type Entity } from "./catalog.js";

/** A condition on a candidate bundle. */
export interface Predicate {
  /** OLM's wording, e.g. `with package: etcd and with version in range: >=1.0.0`. */
  readonly text: string;
  /** The property the predicate came from as `{<type>: <value>}` (the design's `meets`). */
  readonly meets: { [type: string]: JsonValue };
  /** The constraint's `failureMessage`, if any. */
  readonly failureMessage?: string;
  /** Why the predicate can never hold (unparsable range, invalid CEL), if so. */
  readonly error?: string;
  test(e: Entity): boolean;
  /** A superset of the matching entities (an index lookup), or undefined for "scan everything". */
  scope(set: CatalogSet): readonly Entity[] | undefined;
}

const never = (): boolean => false;

let celEnv: Environment | undefined;
function env(): Environment {
  if (!celEnv) {
    celEnv = new Environment({ unlistedVariablesAreDyn: false })
      .registerVariable("properties", "list<map<string, dyn>>")
      .registerFunction("semver_compare(dyn, dyn): int", (a: unknown, b: unknown): bigint => {
        const va = tryParseTolerant(String(a));
        if (va instanceof SemverError) throw new Error(`Invalid version: ${String(a)}`);
        const vb = tryParseTolerant(String(b));
        if (vb instanceof SemverError) throw new Error(`Invalid version: ${String(b)}`);
        return BigInt(va.compare(vb));
      })
      .registerFunction(`string.${RE2_MATCHES}(string): bool`, re2Matches);
  }
  return celEnv;
}

/**
 * CEL's `matches` as cel-go has it: Go's regexp (RE2 syntax, linear time in the input, no
 * backreferences or lookarounds, `\z`), searching anywhere in the string. cel-js's own `matches`
 * uses the JavaScript engine's backtracking RegExp, where `"aaa…!".matches("^(a+)+$")` takes
 * exponential time; every `matches` call of a rule is renamed to this function before evaluation.
 */
const RE2_MATCHES = "opcat_matches_re2";
const re2Cache = new Map<string, RE2JS | Error>();

function re2Matches(s: string, pattern: string): boolean {
  let re = re2Cache.get(pattern);
  if (!re) {
    try {
      re = RE2JS.compile(pattern);
    } catch (e) {
      re = new Error(`invalid regular expression ${JSON.stringify(pattern)}: ${(e as Error).message}`);
    }
    if (re2Cache.size >= 256) re2Cache.delete(re2Cache.keys().next().value as string);
    re2Cache.set(pattern, re);
  }
  if (re instanceof Error) throw re;
  return re.test(s);
}

/** Points every `<string>.matches(<string>)` call of a parsed rule at {@link re2Matches}. */
function useRe2(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) useRe2(n);
    return;
  }
  if (node === null || typeof node !== "object" || !("op" in node) || !("args" in node)) return;
  const ast = node as ASTNode;
  if (ast.op === "rcall") {
    const args = ast.args as [string, ASTNode, ASTNode[]];
    if (args[0] === "matches" && args[2].length === 1) args[0] = RE2_MATCHES;
  }
  if (ast.op !== "value" && ast.op !== "id") useRe2(ast.args);
}

/** A compiled CEL rule over `properties`, or the compile error (OLM's texts where it has one). */
export type CelProgram = { readonly test: (e: Entity) => boolean } | { readonly error: string };

/** Compiled rules, the most recently compiled last (bounded: a server compiles whatever its clients send). */
const celCache = new Map<string, CelProgram>();
const CEL_CACHE_MAX = 1024;
const celProps = new WeakMap<Entity, { type: string; value: unknown }[]>();

function propertiesOf(e: Entity): { type: string; value: unknown }[] {
  let l = celProps.get(e);
  if (!l) {
    l = [];
    for (const p of e.properties) {
      try {
        l.push({ type: p.type, value: p.value.value });
      } catch {
        l.push({ type: p.type, value: null });
      }
    }
    celProps.set(e, l);
  }
  return l;
}

/** Compiles a CEL rule in OLM's environment; runtime errors make the rule false for that bundle. */
export function compileCel(rule: string): CelProgram {
  let p = celCache.get(rule);
  if (p) return p;
  // type-checked as written, so that errors name `matches`; evaluated with matches in RE2 semantics
  const checked = env().check(rule);
  if (!checked.valid)
    p = { error: `cel compile error: ${String(checked.error?.message ?? "invalid expression").split("\n")[0]}` };
  else if (checked.type !== "bool") p = { error: "cel expressions must have type Bool" };
  else {
    const fn = env().parse(rule);
    useRe2(fn.ast);
    p = {
      test: (e: Entity): boolean => {
        try {
          return fn({ properties: propertiesOf(e) }) === true;
        } catch {
          return false;
        }
      },
    };
  }
  if (celCache.size >= CEL_CACHE_MAX) celCache.delete(celCache.keys().next().value as string);
  celCache.set(rule, p);
  return p;
}

function rangePredicate(pkg: string, range: string, meets: Predicate["meets"], failureMessage?: string): Predicate {
  const r = tryParseRange(range);
  const text = `with package: ${pkg} and with version in range: ${range}`;
  if (r instanceof SemverError) {
    return {
      text,
      meets,
      failureMessage,
      error: `invalid version range ${JSON.stringify(range)}: ${r.message}`,
      test: never,
      scope: () => [],
    };
  }
  const rr: Range = r;
  return {
    text,
    meets,
    failureMessage,
    test: (e) => e.package === pkg && e.version !== undefined && rr(e.version),
    scope: (s) => s.byPackage(pkg),
  };
}

function gvkPredicate(
  g: { group: string; version: string; kind: string },
  meets: Predicate["meets"],
  failureMessage?: string,
): Predicate {
  const key = gvkKey(g);
  return { text: gvkText(g), meets, failureMessage, test: (e) => e.provides.includes(key), scope: (s) => s.byGvk(key) };
}

/** Compiles a parsed `olm.constraint` (OLM's `constraints.Constraint`) into a predicate. */
export function compileConstraint(
  c: Constraint,
  meets: Predicate["meets"] = { "olm.constraint": c as unknown as JsonValue },
): Predicate {
  const fm = c.failureMessage;
  if (c.gvk) return gvkPredicate(c.gvk, meets, fm);
  if (c.package) return rangePredicate(c.package.packageName, c.package.versionRange, meets, fm);
  if (c.cel) {
    const prog = compileCel(c.cel.rule);
    const text = `with constraint: ${JSON.stringify(c.cel.rule)} and message: ${JSON.stringify(fm ?? "")}`;
    if ("error" in prog) return { text, meets, failureMessage: fm, error: prog.error, test: never, scope: () => [] };
    return { text, meets, failureMessage: fm, test: prog.test, scope: () => undefined };
  }
  for (const k of ["all", "any", "not"] as const) {
    const cc = c[k];
    if (!cc) continue;
    const kids = cc.constraints.map((x) => compileConstraint(x, meets));
    const err = kids.find((x) => x.error)?.error;
    const texts = kids.map((x) => (kids.length > 1 ? `(${x.text})` : x.text));
    if (k === "all") {
      return {
        text: texts.join(" and "),
        meets,
        failureMessage: fm,
        error: kids.length === 0 ? "constraint is empty" : err,
        test: (e) => kids.length > 0 && kids.every((x) => x.test(e)),
        scope: (s) => {
          let best: readonly Entity[] | undefined;
          for (const x of kids) {
            const sc = x.scope(s);
            if (sc && (!best || sc.length < best.length)) best = sc;
          }
          return best;
        },
      };
    }
    if (k === "any") {
      return {
        text: texts.join(" or "),
        meets,
        failureMessage: fm,
        error: kids.length === 0 ? "constraint is empty" : undefined,
        test: (e) => kids.some((x) => x.test(e)),
        scope: () => undefined,
      };
    }
    return {
      text: texts.map((t) => `not ${t}`).join(" and "),
      meets,
      failureMessage: fm,
      error: err,
      test: (e) => !kids.some((x) => x.test(e)),
      scope: () => undefined,
    };
  }
  return {
    text: "with an empty constraint",
    meets,
    failureMessage: fm,
    error: "constraint is empty",
    test: never,
    scope: () => [],
  };
}

const depCache = new WeakMap<Entity, Predicate[]>();

/**
 * The dependencies of a bundle, one predicate per `olm.gvk.required`, `olm.package.required` and
 * `olm.constraint` property (unknown property types are ignored, as in OLM). An `olm.constraint`
 * that does not parse becomes a predicate that never holds, with the parse error.
 */
export function dependenciesOf(e: Entity): readonly Predicate[] {
  let l = depCache.get(e);
  if (l) return l;
  l = [];
  for (const g of e.parsed.gvksRequired)
    l.push(gvkPredicate(g, { "olm.gvk.required": { group: g.group, version: g.version, kind: g.kind } }));
  for (const r of e.parsed.packagesRequired)
    l.push(
      rangePredicate(r.packageName, r.versionRange, {
        "olm.package.required": { packageName: r.packageName, versionRange: r.versionRange },
      }),
    );
  for (const p of e.parsed.others) {
    if (p.type !== "olm.constraint") continue;
    let meets: Predicate["meets"];
    try {
      meets = { "olm.constraint": p.value.value };
    } catch {
      meets = { "olm.constraint": null };
    }
    try {
      l.push(compileConstraint(parseConstraint(p.value.text), meets));
    } catch (err) {
      l.push({
        text: "with an unparsable constraint",
        meets,
        error: `parse olm.constraint: ${(err as Error).message}`,
        test: never,
        scope: () => [],
      });
    }
  }
  depCache.set(e, l);
  return l;
}

const matchCache = new WeakMap<CatalogSet, WeakMap<Predicate, readonly Entity[]>>();

/**
 * Every entity matching a predicate, in catalog order. Memoised per catalog set and predicate (the
 * predicates of {@link dependenciesOf} are kept per entity), so a dependency's candidates are
 * computed once, not at every resolution; a CEL rule would otherwise be evaluated on every bundle.
 */
export function matching(set: CatalogSet, p: Predicate): readonly Entity[] {
  if (p.error) return [];
  let m = matchCache.get(set);
  if (!m) matchCache.set(set, (m = new WeakMap()));
  let r = m.get(p);
  if (r) return r;
  const scope = p.scope(set);
  r = scope
    ? scope.filter((e) => p.test(e)).sort((a, b) => a.ordinal - b.ordinal)
    : set.entities.filter((e) => p.test(e));
  m.set(p, r);
  return r;
}
