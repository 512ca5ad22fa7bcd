/**
 * metav1.LabelSelector, matched as Kubernetes matches it (apimachinery's LabelSelectorAsSelector): an
 * absent selector selects nothing, an empty one everything; `In`/`NotIn` need values and
 * `Exists`/`DoesNotExist` take none; an invalid selector (an unknown operator, values where none belong
 * or none where they must be) selects nothing. Callers with another policy for an absent or empty
 * selector (a catalog filter selects every catalog, an Instance's bundle selector none) say so with
 * {@link isEmptySelector} before calling {@link selectorMatches}.
 */

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Why the selector is not valid (as LabelSelectorAsSelector refuses it), or undefined. */
export function selectorProblem(sel: LabelSelector): string | undefined {
  for (const e of sel.matchExpressions ?? []) {
    const n = e.values?.length ?? 0;
    if (e.operator === "In" || e.operator === "NotIn") {
      if (n === 0) return `for '${e.operator.toLowerCase()}', 'notin' operators, values set can't be empty`;
    } else if (e.operator === "Exists" || e.operator === "DoesNotExist") {
      if (n > 0) return "values set must be empty for exists and does not exist";
    } else return `"${e.operator}" is not a valid label selector operator`;
  }
  return undefined;
}

/** No matchLabels and no matchExpressions. */
export function isEmptySelector(sel: LabelSelector | undefined | null): boolean {
  return !!sel && Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions?.length ?? 0) === 0;
}

export function selectorMatches(
  sel: LabelSelector | undefined | null,
  labels: Record<string, string> | undefined,
): boolean {
  if (!sel || selectorProblem(sel) !== undefined) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (!Object.hasOwn(l, k) || l[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const vals = e.values ?? [];
    const ok =
      e.operator === "In"
        ? has && vals.includes(l[e.key]!)
        : e.operator === "NotIn"
          ? !has || !vals.includes(l[e.key]!)
          : e.operator === "Exists"
            ? has
            : !has;
    if (!ok) return false;
  }
  return true;
}
