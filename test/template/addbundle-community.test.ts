/**
 * Real data (seed 003): every community bundle with a release-config.yaml
 * (../shared/data/community/operators/<pkg>/<version>/release-config.yaml) is removed from the
 * templates its release config lists (the inverse edit), published again with add-bundle and the
 * release config (the bundle image answered from the committed catalogs with --reuse semantics),
 * and the result compared with the committed templates: textually, and semantically (parsed, and
 * parsed with every list sorted — the order of channel entries, bundles and semver images carries
 * no meaning, and re-adding an older bundle appends it after the ones published later).
 *
 * Every release config must give the committed templates back: byte for byte (the inverse edit is
 * exact when the bundle was the last one published), or the same content with the bundle at the end
 * of its lists instead of among the bundles published later. The others are listed by name in
 * EXCEPTIONS with the reason: templates edited after publication (channels renamed, edges changed)
 * so that the release config no longer describes them, bundles in neither the committed catalogs
 * nor the templates, and one whose text the pipeline's YAML writer wrapped.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { isMap, isScalar, isSeq, parse, parseDocument, type Node, type YAMLMap } from "yaml";
import { loadText } from "../../src/fbc/load.js";
import { parseProperties } from "../../src/fbc/properties.js";
import { emptyConfig, mergeConfigs, type Bundle, type DeclarativeConfig } from "../../src/fbc/types.js";
import { addBundleFromReleaseConfig, type ReleaseConfigReport } from "../../src/template/addbundle/addbundle.js";
import { parseReleaseConfig } from "../../src/template/addbundle/releaseconfig.js";
import { reuseSource } from "../../src/template/source/reuse.js";
import { COMMUNITY, requireShared } from "../shared.js";

interface ReplayCase {
  pkg: string;
  version: string;
  /** How the result compares with the committed templates. */
  result: "identical" | "equivalent" | "different" | "failed" | "no-image";
  /** Equivalent, and some template has the same content (lists in the same order) in different text. */
  textOnly?: boolean;
  /** Why it is not identical. */
  reason?: string;
  report?: ReleaseConfigReport;
}

/** Every `operators/<pkg>/<version>/release-config.yaml`, sorted. */
function releaseConfigs(): { pkg: string; version: string; file: string }[] {
  const root = join(COMMUNITY, "operators");
  const out: { pkg: string; version: string; file: string }[] = [];
  for (const pkg of readdirSync(root).sort()) {
    const dir = join(root, pkg);
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      continue;
    }
    for (const version of names) {
      const file = join(dir, version, "release-config.yaml");
      if (existsSync(file)) out.push({ pkg, version, file });
    }
  }
  return out;
}

const catalogCache = new Map<string, DeclarativeConfig>();

/** The package's committed catalogs (every v4.* present), merged. */
function packageCatalog(pkg: string): DeclarativeConfig {
  let cfg = catalogCache.get(pkg);
  if (cfg) return cfg;
  cfg = emptyConfig();
  const dir = join(COMMUNITY, "catalogs");
  for (const v of readdirSync(dir).sort()) {
    const f = join(dir, v, pkg, "catalog.yaml");
    if (existsSync(f)) mergeConfigs(cfg, loadText(readFileSync(f, "utf8"), f).config);
  }
  catalogCache.set(pkg, cfg);
  return cfg;
}

function versionOf(b: Bundle): string | undefined {
  try {
    return parseProperties(b.properties).packages[0]?.version;
  } catch {
    return undefined;
  }
}

/** Removes the lines of a block sequence item (its `-` line through its end). */
function removeItem(text: string, item: Node, cuts: [number, number][]): void {
  const start = text.lastIndexOf("\n", item.range![0] - 1) + 1;
  let end = item.range![1];
  if (end > 0 && text[end - 1] !== "\n") {
    const nl = text.indexOf("\n", end);
    end = nl < 0 ? text.length : nl + 1;
  }
  cuts.push([start, end]);
}

function str(m: unknown, key: string): string | undefined {
  if (!isMap(m)) return undefined;
  for (const p of m.items) {
    const k = isScalar(p.key) ? String(p.key.value) : "";
    if (k.toLowerCase() === key.toLowerCase() && isScalar(p.value) && typeof p.value.value === "string")
      return p.value.value;
  }
  return undefined;
}

function child(m: unknown, key: string): unknown {
  if (!isMap(m)) return undefined;
  for (const p of m.items)
    if ((isScalar(p.key) ? String(p.key.value) : "").toLowerCase() === key.toLowerCase()) return p.value;
  return undefined;
}

/** The inverse of add-bundle on one template's text: the bundle's image and channel entries removed. */
function removeBundle(text: string, image: string, name: string, channels: string[]): string {
  const doc = parseDocument(text, { version: "1.1" });
  const root = doc.contents as YAMLMap<unknown, unknown>;
  const cuts: [number, number][] = [];
  if (str(root, "schema") === "olm.semver") {
    for (const ch of channels) {
      const list = child(child(root, ch), "bundles");
      if (isSeq(list)) for (const it of list.items) if (str(it, "image") === image) removeItem(text, it as Node, cuts);
    }
  } else {
    const entries = child(root, "entries");
    if (isSeq(entries)) {
      for (const it of entries.items) {
        const schema = str(it, "schema");
        if (schema === "olm.bundle" && str(it, "image") === image) removeItem(text, it as Node, cuts);
        if (schema === "olm.channel" && channels.includes(str(it, "name") ?? "")) {
          const es = child(it, "entries");
          if (isSeq(es)) for (const e of es.items) if (str(e, "name") === name) removeItem(text, e as Node, cuts);
        }
      }
    }
  }
  cuts.sort((a, b) => b[0] - a[0]);
  for (const [s, e] of cuts) text = text.slice(0, s) + text.slice(e);
  return text;
}

/** Replays one release config in a temporary copy of the package's templates. */
async function replay(pkg: string, version: string, file: string): Promise<ReplayCase> {
  const cat = packageCatalog(pkg);
  const rc = parseReleaseConfig(readFileSync(file, "utf8"));
  if ("problems" in rc) return { pkg, version, result: "failed", reason: rc.problems.join("; ") };
  // The bundle of that version, else the one behind the pipeline's pull spec for that version
  // (aws-neuron-operator 0.0.4 is a CSV of version 0.1.2).
  const pullSpec = `quay.io/community-operator-pipeline-prod/${pkg}:${version}`;
  let bundle: { name: string; image: string } | undefined =
    cat.bundles.find((b) => b.package === pkg && versionOf(b) === version) ??
    cat.bundles.find((b) => b.image === pullSpec);
  let name: string | undefined;
  if (!bundle) {
    // Not in the committed catalogs any more: the pipeline's pull spec, if a listed template has it,
    // published with --name (the CSV name convention <package>.v<version>).
    const image = `quay.io/community-operator-pipeline-prod/${pkg}:${version}`;
    const listed = rc.catalogTemplates.map((t) =>
      join(COMMUNITY, "operators", pkg, "catalog-templates", t.templateName),
    );
    if (!listed.some((p) => existsSync(p) && readFileSync(p, "utf8").includes(image))) {
      return {
        pkg,
        version,
        result: "no-image",
        reason: `no bundle of version ${version} in the committed catalogs or templates`,
      };
    }
    name = `${pkg}.v${version}`;
    bundle = { name, image };
  }
  const tmp = mkdtempSync(join(tmpdir(), "opcat-addbundle-"));
  try {
    const srcTemplates = join(COMMUNITY, "operators", pkg, "catalog-templates");
    const templates = join(tmp, pkg, "catalog-templates");
    cpSync(srcTemplates, templates, { recursive: true });
    mkdirSync(join(tmp, pkg, version), { recursive: true });
    const rcPath = join(tmp, pkg, version, "release-config.yaml");
    writeFileSync(rcPath, readFileSync(file));
    for (const t of rc.catalogTemplates) {
      const p = join(templates, t.templateName);
      if (!existsSync(p)) continue;
      writeFileSync(p, removeBundle(readFileSync(p, "utf8"), bundle.image, bundle.name, t.channels));
    }
    const report = await addBundleFromReleaseConfig(rcPath, bundle.image, {
      source: reuseSource(cat, { reuseTags: true }),
      name,
    });
    if (report.outcome !== "added" && report.outcome !== "already-present") {
      const why = [
        ...report.problems,
        ...report.templates.flatMap((t) => t.problems.filter((p) => p.severity === "error")),
      ].map((p) => p.message);
      return { pkg, version, result: "failed", reason: `${report.outcome}: ${[...new Set(why)].join("; ")}`, report };
    }
    let identical = true;
    let equivalent = true;
    let textOnly = false;
    const reasons: string[] = [];
    for (const t of unique(rc.catalogTemplates.map((x) => x.templateName))) {
      const gotBytes = readFileSync(join(templates, t));
      const wantBytes = readFileSync(join(srcTemplates, t));
      if (gotBytes.equals(wantBytes)) continue;
      const [got, want] = [gotBytes.toString("utf8"), wantBytes.toString("utf8")];
      identical = false;
      const [g, w] = [parse(got, { version: "1.1" }) as unknown, parse(want, { version: "1.1" }) as unknown];
      if (isDeepStrictEqual(g, w)) {
        reasons.push(`${t}: same content, different text`);
        textOnly = true;
        continue;
      }
      if (isDeepStrictEqual(canonical(g), canonical(w))) {
        reasons.push(`${t}: same content, other list order`);
        continue;
      }
      equivalent = false;
      reasons.push(`${t}: ${describeDifference(parse(got, { version: "1.1" }), parse(want, { version: "1.1" }))}`);
    }
    if (identical) return { pkg, version, result: "identical", report };
    return {
      pkg,
      version,
      result: equivalent ? "equivalent" : "different",
      textOnly: equivalent && textOnly,
      reason: reasons.join("; "),
      report,
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** A value with every list sorted (list order carries no meaning in templates: entries, bundles, skips). */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (v !== null && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canonical(x)]));
  return v;
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}

/** A short description of how two parsed templates differ (first differing path). */
function describeDifference(got: unknown, want: unknown, path = ""): string {
  if (Array.isArray(got) && Array.isArray(want)) {
    if (got.length !== want.length) {
      const same = got.filter((g) => want.some((w) => isDeepStrictEqual(g, w))).length;
      if (same === got.length && same === want.length) return `${path || "/"}: same items in another order`;
      const gs = new Set(got.map((g) => JSON.stringify(g)));
      const ws = new Set(want.map((w) => JSON.stringify(w)));
      if (got.length === want.length && [...gs].every((g) => ws.has(g)))
        return `${path || "/"}: same items in another order`;
      return `${path || "/"}: ${got.length} items, committed has ${want.length}`;
    }
    const gs = got.map((g) => JSON.stringify(g)).sort();
    const ws = want.map((w) => JSON.stringify(w)).sort();
    if (isDeepStrictEqual(gs, ws)) return `${path || "/"}: same items in another order`;
    for (let i = 0; i < got.length; i++)
      if (!isDeepStrictEqual(got[i], want[i])) return describeDifference(got[i], want[i], `${path}/${i}`);
  }
  if (
    got !== null &&
    want !== null &&
    typeof got === "object" &&
    typeof want === "object" &&
    !Array.isArray(got) &&
    !Array.isArray(want)
  ) {
    const keys = unique([...Object.keys(got), ...Object.keys(want)]);
    for (const k of keys) {
      const a = (got as Record<string, unknown>)[k];
      const b = (want as Record<string, unknown>)[k];
      if (!isDeepStrictEqual(a, b)) return describeDifference(a, b, `${path}/${k}`);
    }
  }
  return `${path || "/"}: ${JSON.stringify(got)?.slice(0, 120)} vs committed ${JSON.stringify(want)?.slice(0, 120)}`;
}

/**
 * The cases that do not give the committed templates back byte for byte or with only the bundle's
 * place in its lists changed, with why. (`equivalent`: the same content, in other text.)
 */
const EXCEPTIONS: Record<string, { result: ReplayCase["result"]; why: string }> = {
  "project-onboarding-operator@0.0.51": {
    result: "equivalent",
    why:
      "the committed template has the image on the line after its key (the pipeline's ruamel.yaml wrapped it); " +
      "after the inverse edit no wrapped value is left in the file, so add-bundle cannot see that style",
  },
  "cat-facts-operator@1.1.0": {
    result: "failed",
    why: "its template semver.yaml no longer exists (the package moved to basic.yaml)",
  },
  "dell-csm-operator@1.11.1": {
    result: "different",
    why: "the committed entry replaces v1.10.2; the release config says v1.10.1 (edited after publication)",
  },
  "dell-csm-operator@1.11.2": {
    result: "different",
    why: "the committed entry replaces v1.10.2; the release config says v1.10.1 (edited after publication)",
  },
  "dell-csm-operator@1.11.3": {
    result: "failed",
    why:
      "with the release config's replaces v1.10.1 the channel strands " +
      "bundles: conflict (the committed entry replaces v1.10.2)",
  },
  "multi-nic-cni-operator@1.2.6": {
    result: "different",
    why: "channel alpha-1.2 was removed from the templates after publication; add-bundle creates it again",
  },
  "multi-nic-cni-operator@1.2.7": {
    result: "different",
    why: "channel alpha-1.2 was removed from the templates after publication; add-bundle creates it again",
  },
  "multi-nic-cni-operator@1.2.8": {
    result: "failed",
    why:
      "the committed alpha entries were re-linked after publication: the " +
      "release config's edges leave two heads (and so does the inverse edit)",
  },
  "multicluster-global-hub-operator@1.6.0": {
    result: "different",
    why: "channel stable was renamed release-1.6 after publication; add-bundle creates stable again",
  },
  "visionone-containersecurity@0.0.2": {
    result: "different",
    why:
      "the committed stable entry has no replaces (edited after " +
      "publication); the release config says replaces v0.0.1",
  },
  "rabbitmq-messaging-topology-operator@1.18.3": {
    result: "no-image",
    why: "the bundle was removed from the templates and is not in the committed catalogs",
  },
  "rabbitmq-messaging-topology-operator@1.19.0": {
    result: "no-image",
    why: "the bundle was removed from the templates and is not in the committed catalogs",
  },
  "rabbitmq-messaging-topology-operator@1.19.1": {
    result: "no-image",
    why: "the bundle was removed from the templates and is not in the committed catalogs",
  },
};

test(
  "community release configs: add-bundle reproduces the committed templates",
  requireShared(join(COMMUNITY, "operators")),
  async () => {
    // Each case is compared with the committed templates in replay(): byte-identical, or the same
    // content with only list order changed; anything else must be a named exception.
    const exceptions: Record<string, ReplayCase["result"]> = {};
    const configs = releaseConfigs();
    assert.ok(configs.length > 0);
    for (const { pkg, version, file } of configs) {
      const c = await replay(pkg, version, file);
      const reproduced = c.result === "identical" || (c.result === "equivalent" && !c.textOnly);
      if (!reproduced) exceptions[`${pkg}@${version}`] = c.result;
      // Every successful publication was validated by rendering (or, for images no catalog has, structurally).
      for (const t of c.report?.templates ?? []) if (t.outcome === "added") assert.notEqual(t.validation, "none");
    }
    assert.deepEqual(exceptions, Object.fromEntries(Object.entries(EXCEPTIONS).map(([k, v]) => [k, v.result])));
  },
);

/** The release configs that do not find everything already in the committed templates, with why. */
const AGAIN: Record<string, { outcome: string; why: string }> = {
  "cat-facts-operator@1.1.0": { outcome: "invalid-input", why: EXCEPTIONS["cat-facts-operator@1.1.0"]!.why },
  "dell-csm-operator@1.11.1": { outcome: "conflict", why: EXCEPTIONS["dell-csm-operator@1.11.1"]!.why },
  "dell-csm-operator@1.11.2": { outcome: "conflict", why: EXCEPTIONS["dell-csm-operator@1.11.2"]!.why },
  "dell-csm-operator@1.11.3": { outcome: "conflict", why: EXCEPTIONS["dell-csm-operator@1.11.3"]!.why },
  "multi-nic-cni-operator@1.2.6": { outcome: "added", why: EXCEPTIONS["multi-nic-cni-operator@1.2.6"]!.why },
  "multi-nic-cni-operator@1.2.7": { outcome: "added", why: EXCEPTIONS["multi-nic-cni-operator@1.2.7"]!.why },
  "multi-nic-cni-operator@1.2.8": { outcome: "conflict", why: EXCEPTIONS["multi-nic-cni-operator@1.2.8"]!.why },
  "multicluster-global-hub-operator@1.6.0": {
    outcome: "added",
    why: EXCEPTIONS["multicluster-global-hub-operator@1.6.0"]!.why,
  },
  "visionone-containersecurity@0.0.2": {
    outcome: "conflict",
    why: EXCEPTIONS["visionone-containersecurity@0.0.2"]!.why,
  },
  "clusterpulse@0.1.0": {
    outcome: "no-image",
    why: "only its basic.yaml (which no catalog mapping renders) lists it: not in the committed catalogs",
  },
  "rabbitmq-messaging-topology-operator@1.18.3": { outcome: "no-image", why: "not in the committed catalogs" },
  "rabbitmq-messaging-topology-operator@1.19.0": { outcome: "no-image", why: "not in the committed catalogs" },
  "rabbitmq-messaging-topology-operator@1.19.1": { outcome: "no-image", why: "not in the committed catalogs" },
};

test(
  "community release configs: publishing into the committed templates changes nothing",
  requireShared(join(COMMUNITY, "operators")),
  async () => {
    // Where the release config still describes the committed templates, everything is already there:
    // add-bundle (not a dry run) reports already-present and every template keeps its committed bytes.
    // The others are named in AGAIN with their outcome.
    const tmp = mkdtempSync(join(tmpdir(), "opcat-addbundle-again-"));
    try {
      const others: Record<string, string> = {};
      for (const { pkg, version, file } of releaseConfigs()) {
        const cat = packageCatalog(pkg);
        const pullSpec = `quay.io/community-operator-pipeline-prod/${pkg}:${version}`;
        const bundle =
          cat.bundles.find((b) => b.package === pkg && versionOf(b) === version) ??
          cat.bundles.find((b) => b.image === pullSpec);
        if (!bundle) {
          others[`${pkg}@${version}`] = "no-image";
          continue;
        }
        const dir = join(tmp, `${pkg}-${version}`);
        const committed = join(COMMUNITY, "operators", pkg, "catalog-templates");
        cpSync(committed, join(dir, "catalog-templates"), { recursive: true });
        mkdirSync(join(dir, version));
        writeFileSync(join(dir, version, "release-config.yaml"), readFileSync(file));
        const r = await addBundleFromReleaseConfig(join(dir, version, "release-config.yaml"), bundle.image, {
          source: reuseSource(cat, { reuseTags: true }),
        });
        if (r.outcome !== "already-present") {
          others[`${pkg}@${version}`] = r.outcome;
          continue;
        }
        assert.equal(r.written, false, `${pkg}@${version}`);
        for (const t of readdirSync(committed))
          assert.ok(
            readFileSync(join(dir, "catalog-templates", t)).equals(readFileSync(join(committed, t))),
            `${pkg}@${version}: ${t} changed`,
          );
      }
      assert.deepEqual(others, Object.fromEntries(Object.entries(AGAIN).map(([k, v]) => [k, v.outcome])));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  },
);
