/**
 * Bundle discovery for the graph template: the tags of `bundles.repo`, kept when they match
 * `bundles.tagRegex` and, parsed leniently as versions (`v1.2.3`, `1.2`), fall in
 * `bundles.semverRange` (a blang range). Tags come from a TagLister: a registry
 * (`GET /v2/<name>/tags/list`), or an already-rendered catalog (the tags of its bundle images).
 */
import { type ErrorKind, OpcatError } from "../../errors/index.js";
import type { DeclarativeConfig } from "../../fbc/types.js";
import { compareUtf8 } from "../../gojson/encode.js";
import { goQuote } from "../../gojson/fmt.js";
import { tryParseNormalizedNamed } from "../../reference/reference.js";
import type { RegistryClient } from "../../image/registry.js";
import {
  compareVersions,
  SemverPanic,
  tryParseRange,
  tryParseTolerant,
  type Range,
  type Version,
} from "../../semver/index.js";

/** Lists the tags of a repository (`registry/path`, no tag or digest). */
export interface TagLister {
  listTags(repo: string): Promise<string[]>;
}

function tagsError(path: string, msg: string, kind: ErrorKind = "invalid"): OpcatError {
  return new OpcatError("TEMPLATE_GRAPH_TAGS", `${path}: ${msg}`, { kind });
}

/** `bundles.tagRegex` as a JavaScript RegExp (RE2 syntax shared with JavaScript; unanchored like Go's MatchString). */
export function compileTagRegex(source: string): RegExp {
  try {
    return new RegExp(source);
  } catch (e) {
    throw tagsError("bundles.tagRegex", `invalid regular expression ${goQuote(source)}: ${(e as Error).message}`);
  }
}

function compileRange(source: string): Range {
  let r: Range | Error;
  try {
    r = tryParseRange(source);
  } catch (e) {
    if (!(e instanceof SemverPanic)) throw e;
    r = e;
  }
  if (r instanceof Error) throw tagsError("bundles.semverRange", `invalid range ${goQuote(source)}: ${r.message}`);
  return r;
}

/** The normalised name (`domain/path`) of a repository given without tag or digest. */
function repoName(repo: string, path: string): string {
  const ref = tryParseNormalizedNamed(repo);
  if (ref instanceof Error) throw tagsError(path, `invalid repository ${goQuote(repo)}: ${ref.message}`);
  if (ref.tag !== undefined || ref.digest !== undefined)
    throw tagsError(path, `${goQuote(repo)} must name a repository, without tag or digest`);
  return ref.name;
}

/**
 * The images (`<repo>:<tag>`, `repo` as written) of the tags `lister` reports for `bundles.repo`
 * that match `tagRegex` (all tags when absent) and, when `semverRange` is set, parse as versions
 * in the range (tags that are not versions are left out). Sorted by version, then by tag.
 * Errors: TEMPLATE_GRAPH_TAGS (bad regex/range/repository, or no lister: exit code 2), or the
 * lister's errors.
 */
export async function discoverTagImages(
  bundles: { repo?: string; tagRegex?: string; semverRange?: string },
  lister: TagLister | undefined,
): Promise<string[]> {
  const repo = bundles.repo;
  if (!repo) return [];
  repoName(repo, "bundles.repo");
  const re = bundles.tagRegex ? compileTagRegex(bundles.tagRegex) : undefined;
  const range = bundles.semverRange ? compileRange(bundles.semverRange) : undefined;
  if (!lister) {
    throw tagsError(
      "bundles.repo",
      `listing the tags of ${goQuote(repo)} needs registry access, which this bundle source does not provide`,
      "usage",
    );
  }
  const picked: { tag: string; v: Version | undefined }[] = [];
  for (const tag of new Set(await lister.listTags(repo))) {
    if (re && !re.test(tag)) continue;
    const parsed = tryParseTolerant(tag);
    const v = parsed instanceof Error ? undefined : parsed;
    if (range && (v === undefined || !range(v))) continue;
    picked.push({ tag, v });
  }
  picked.sort((a, b) => {
    if (a.v && b.v) {
      const c = compareVersions(a.v, b.v);
      if (c !== 0) return c;
    } else if (a.v || b.v) return a.v ? -1 : 1;
    return compareUtf8(a.tag, b.tag);
  });
  return picked.map((p) => `${repo}:${p.tag}`);
}

/**
 * Tags from a registry: the repository's pull sources (mirrors first, as registries.conf says) are
 * tried in order and the first that answers wins.
 */
export function registryTagLister(client: RegistryClient, pageSize?: number): TagLister {
  return {
    async listTags(repo: string): Promise<string[]> {
      const name = repoName(repo, "bundles.repo");
      let last: unknown;
      for (const t of client.sourcesFor(name, false)) {
        try {
          return await client.listTags(t, pageSize);
        } catch (e) {
          last = e;
        }
      }
      throw last;
    },
  };
}

/**
 * Tags from an already-rendered catalog: the tags of its bundle images in the repository (compared
 * by normalised name), for rendering graph templates offline with `--reuse`.
 */
export function catalogTagLister(cfg: DeclarativeConfig): TagLister {
  let byRepo: Map<string, Set<string>> | undefined;
  return {
    listTags(repo: string): Promise<string[]> {
      if (!byRepo) {
        byRepo = new Map();
        for (const b of cfg.bundles) {
          const ref = tryParseNormalizedNamed(b.image);
          if (ref instanceof Error || ref.tag === undefined) continue;
          let set = byRepo.get(ref.name);
          if (!set) byRepo.set(ref.name, (set = new Set()));
          set.add(ref.tag);
        }
      }
      try {
        return Promise.resolve([...(byRepo.get(repoName(repo, "bundles.repo")) ?? [])]);
      } catch (e) {
        return Promise.reject(e);
      }
    },
  };
}
