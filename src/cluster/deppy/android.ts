/**
 * Android-style approval (docs/cluster.md, docs/security.md): an update is approved automatically
 * only when it needs no privilege the installed bundle does not already have. RBAC grants are
 * compared one atom at a time: (subject, verb, API group, resource, resource name, namespace), or
 * (subject, verb, non-resource URL), with RBAC's wildcards: `*` verbs, groups, resources and
 * trailing-`*` non-resource URLs, `resource/*` subresources, rules without resourceNames covering
 * every name, and cluster-wide grants covering every namespace. Subjects are compared exactly (kind,
 * name, a ServiceAccount's namespace): the same rights given to anyone else are new. */
import type { KubeClient, KubeObject } from "../client.js";
import { grantedRulesInCluster, type GrantedRule } from "../rukpak/permissions.js";

/** One permission atom. */
export interface PermissionAtom {
  subject: string;
  scope: string; // "cluster" or a namespace
  verb: string;
  group?: string;
  resource?: string;
  name?: string;
  url?: string;
}

export function atomsOf(r: GrantedRule): PermissionAtom[] {
  const out: PermissionAtom[] = [];
  for (const verb of r.verbs) {
    if (r.nonResourceURLs?.length) {
      for (const url of r.nonResourceURLs) out.push({ subject: r.subject, scope: r.scope, verb, url });
      continue;
    }
    for (const group of r.apiGroups.length ? r.apiGroups : [""]) {
      for (const resource of r.resources) {
        if (r.resourceNames?.length)
          for (const name of r.resourceNames)
            out.push({ subject: r.subject, scope: r.scope, verb, group, resource, name });
        else out.push({ subject: r.subject, scope: r.scope, verb, group, resource });
      }
    }
  }
  return out;
}

function resourceCovers(have: string, want: string): boolean {
  if (have === "*" || have === want) return true;
  // "pods/*" covers every subresource of pods; "*/scale" covers scale of every resource
  const [hr, hs] = have.split("/");
  const [wr, ws] = want.split("/");
  if (hs === undefined || ws === undefined) return false;
  return (hr === "*" || hr === wr) && (hs === "*" || hs === ws);
}

function urlCovers(have: string, want: string): boolean {
  return have === "*" || have === want || (have.endsWith("*") && want.startsWith(have.slice(0, -1)));
}

/** True when rule `r` grants atom `a`. */
export function covers(r: GrantedRule, a: PermissionAtom): boolean {
  if (r.subject !== a.subject) return false;
  if (r.scope !== "cluster" && r.scope !== a.scope) return false;
  if (!r.verbs.includes("*") && !r.verbs.includes(a.verb)) return false;
  if (a.url !== undefined) return (r.nonResourceURLs ?? []).some((u) => urlCovers(u, a.url!));
  if (r.nonResourceURLs?.length && r.resources.length === 0) return false;
  const groups = r.apiGroups.length ? r.apiGroups : [""];
  if (!groups.includes("*") && !groups.includes(a.group ?? "")) return false;
  if (!r.resources.some((x) => resourceCovers(x, a.resource ?? ""))) return false;
  if (r.resourceNames?.length) return a.name !== undefined && r.resourceNames.includes(a.name);
  return true;
}

export function formatAtom(a: PermissionAtom): string {
  const where = a.scope === "cluster" ? "cluster-wide" : `in namespace ${a.scope}`;
  if (a.url !== undefined) return `${a.verb} non-resource URL ${a.url} ${where} for ${a.subject}`;
  const res = a.group ? `${a.resource}.${a.group}` : a.resource;
  return `${a.verb} ${res}${a.name ? ` named ${a.name}` : ""} ${where} for ${a.subject}`;
}

/** The permissions `next` grants that `current` does not, as sentences (sorted, without repeats). */
export function newPermissions(current: readonly GrantedRule[], next: readonly GrantedRule[]): string[] {
  const out = new Set<string>();
  for (const r of next) for (const a of atomsOf(r)) if (!current.some((c) => covers(c, a))) out.add(formatAtom(a));
  return [...out].sort();
}

/**
 * What Android asks about one entry: the privileges the objects `next` would install add to those of
 * `current` (the installed, approved content), the existing roles their bindings reference read from
 * the cluster. Empty: nothing new.
 */
export async function newPrivilegesInCluster(
  client: KubeClient,
  current: readonly KubeObject[],
  next: readonly KubeObject[],
): Promise<string[]> {
  return newPermissions(await grantedRulesInCluster(client, current), await grantedRulesInCluster(client, next));
}
