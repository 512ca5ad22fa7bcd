/**
 * Conformance on real data: every (template, catalog version) pair of the community operators
 * (operators/<pkg>/ci.yaml `fbc.catalog_mapping`) whose rendered catalog is present is rendered
 * with `--reuse` of that very catalog and compared byte for byte with it. The community pipeline
 * renders catalogs v4.17 and later with `--migrate-level bundle-object-to-csv-metadata`.
 * The pairs that are not byte-identical are listed by name in EXCEPTIONS with the reason and the
 * exact check made instead; any other difference fails, and so does an exception that no longer
 * applies (the pair became identical, or differs in another way).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { OpcatError } from "../errors/index.js";
import { loadText } from "../fbc/load.js";
import { packageProperty } from "../fbc/properties.js";
import { normalizeForRender } from "../fbc/render.js";
import type { ChannelEntry, DeclarativeConfig } from "../fbc/types.js";
import { formatCatalog } from "../fbc/write.js";
import { parseVersion, type Version } from "../semver/index.js";
import { parseGoYamlDocument } from "../yaml/index.js";
import { renderTemplate, reuseSource } from "./index.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SHARED = process.env.OPCAT_SHARED ?? resolve(REPO, "..", "shared");
const COMMUNITY = join(SHARED, "data", "community");

function available(): false | string {
  if (existsSync(join(COMMUNITY, "operators")) && existsSync(join(COMMUNITY, "catalogs"))) return false;
  const msg = `real data not found at ${COMMUNITY} (set OPCAT_SHARED to the shared/ directory)`;
  if (process.env.CI === "true") throw new Error(`${msg}; under CI=true this is a failure`);
  return msg;
}

interface Mapping {
  template_name?: string;
  type?: string;
  catalog_names?: string[];
}

/** Catalog versions the pipeline renders with the csv-metadata migration (v4.17 and later). */
function migrateLevelFor(version: string): string | undefined {
  const m = /^v(\d+)\.(\d+)$/.exec(version);
  if (!m) return undefined;
  const [maj, min] = [Number(m[1]), Number(m[2])];
  return maj > 4 || (maj === 4 && min >= 17) ? "bundle-object-to-csv-metadata" : undefined;
}

/**
 * How a pair that is not byte-identical is checked instead.
 * - `missing`: the template is ahead of its catalog: its channels list exactly these bundles, which
 *   the catalog does not have (a basic template published before the catalog was rendered again).
 * - `error`: the template is ahead of its catalog: rendering with `--reuse` fails with exactly this
 *   message (a semver template listing an image the catalog does not have; opm would pull it).
 * - `olderOpm`: the catalog was rendered by an opm older than 4f9d6f22; the output, adjusted as listed,
 *   is byte-identical to the committed catalog, and each adjustment is needed:
 *   `drop` clears these package fields (opm before operator-registry #1933, March 2026, did not set
 *   the package description and icon from the default channel's head);
 *   `linkV156` links every channel again with opm v1.56.0's linker (`linkV156` below), which also
 *   listed the replaced entry in `skips` (changed by operator-registry #1749, opm v1.57.0) and
 *   linked each channel on its own (changed by #1813).
 */
type Exception =
  | { why: string; missing: string[] }
  | { why: string; error: string }
  | { why: string; olderOpm: { drop: ("description" | "icon")[]; linkV156: boolean } };

const EXCEPTIONS: Record<string, Exception> = {
  "ecr-secret-operator/basic.yaml → v4.16": {
    why: "template ahead of its catalog (two bundles published after v4.16 was rendered)",
    missing: ["ecr-secret-operator.v0.6.0", "ecr-secret-operator.v0.5.1"],
  },
  "ecr-secret-operator/basic.yaml → v4.20": {
    why: "template ahead of its catalog (two bundles published after v4.20 was rendered)",
    missing: ["ecr-secret-operator.v0.6.0", "ecr-secret-operator.v0.5.1"],
  },
  "kubernaut-operator/semver.yaml → v4.20": {
    why: "template ahead of its catalog (1.5.1 published after v4.20 was rendered)",
    error:
      "rendering template: render reference " +
      '"quay.io/community-operator-pipeline-prod/kubernaut-operator:1.5.1": ' +
      "image not found in the reused catalog",
  },
  "kubevirt-wol/semver.yaml → v4.20": {
    why:
      "rendered by opm before #1933: no package description or icon (opcat, with --reuse of this migrated catalog, " +
      "knows no icon either: see checkAgainstOpm); edges as opm 4f9d6f22 links them",
    olderOpm: { drop: ["description"], linkV156: false },
  },
  "clusterpulse/semver.yaml → v4.20": {
    why:
      "rendered by opm v1.56 or older: no package description or icon (opcat, with --reuse of this migrated " +
      "catalog, knows no icon either: see checkAgainstOpm), edges from the v1.56 linker",
    olderOpm: { drop: ["description"], linkV156: true },
  },
  "openshift-integration-operator/semver.yaml → v4.20": {
    why:
      "rendered by opm v1.56 or older (edges from the v1.56 linker) and edited afterwards: the committed package has " +
      "the head's icon but no description, which no opm writes " +
      "from a semver template (v1.56 writes neither, #1933 both)",
    olderOpm: { drop: ["description"], linkV156: true },
  },
};

/**
 * opm v1.56.0's semver channel linker (alpha/template/semver/semver.go `linkChannels`, before
 * operator-registry #1749), ported statement by statement: per channel, entries sorted by version;
 * an "inchworm" walks each Y-stream; the Y-stream's highest Z replaces the previous Y-stream's highest Z
 * and skips it and every lower entry of its own Y-stream; the last entry replaces the one before it when
 * their minor versions differ.
 */
function linkV156(cfg: DeclarativeConfig): void {
  const versions = new Map<string, Version>();
  for (const b of cfg.bundles) {
    const v = packageProperty(b.properties)?.version;
    if (v !== undefined && !versions.has(b.name)) versions.set(b.name, parseVersion(v));
  }
  const versionOf = (e: ChannelEntry): Version => {
    const v = versions.get(e.name);
    if (!v) throw new Error(`no version for ${e.name}`);
    return v;
  };
  const sameMinor = (a: Version, b: Version) => a.major === b.major && a.minor === b.minor;
  for (const ch of cfg.channels) {
    const entries: ChannelEntry[] = (ch.entries ?? []).map((e) => ({ ...e, replaces: "", skips: [] }));
    entries.sort((a, b) => versionOf(a).compare(versionOf(b)));
    const n = entries.length;
    let curEdge = 0;
    let yProbe = 0;
    let zmaxQueue = "";
    while (curEdge < n) {
      while (yProbe < n && sameMinor(versionOf(entries[yProbe]!), versionOf(entries[curEdge]!))) yProbe++;
      const preChangeIndex = yProbe - 1;
      const pre = entries[preChangeIndex]!;
      if (curEdge !== yProbe) {
        if (zmaxQueue !== "") {
          pre.skips.push(zmaxQueue);
          pre.replaces = zmaxQueue;
        }
        zmaxQueue = pre.name;
      }
      while (curEdge < preChangeIndex) {
        pre.skips.push(entries[curEdge]!.name);
        curEdge++;
      }
      curEdge++;
      yProbe = curEdge + 1;
    }
    if (n > 1 && versionOf(entries[n - 1]!).minor !== versionOf(entries[n - 2]!).minor)
      entries[n - 1]!.replaces = entries[n - 2]!.name;
    ch.entries = entries;
  }
}

/** The rendered catalog as an older opm would have written it (see Exception). */
function asOlderOpm(cfg: DeclarativeConfig, drop: ("description" | "icon")[], relink: boolean): Buffer {
  const out: DeclarativeConfig = {
    ...cfg,
    packages: cfg.packages.map((p) => {
      const q = { ...p };
      if (drop.includes("description")) q.description = "";
      if (drop.includes("icon")) delete q.icon;
      return q;
    }),
    channels: cfg.channels.map((c) => ({
      ...c,
      entries: c.entries?.map((e) => ({ ...e, skips: [...e.skips] })) ?? null,
    })),
  };
  if (relink) linkV156(out);
  return Buffer.from(formatCatalog(out, "yaml"));
}

const TYPES: Record<string, string> = { "olm.template.basic": "basic", "olm.semver": "semver" };

/**
 * The package and channel blobs the real opm (4f9d6f22) renders from a package's semver template,
 * pulling its bundle images (scripts/oracle/semver-community), for the templates whose committed
 * catalog an older opm wrote.
 */
const OPM_RENDERED = join(REPO, "src", "template", "testdata", "community-semver");

/**
 * Compares opcat's package and channels with what opm 4f9d6f22 renders, byte for byte. With `--reuse`
 * of a catalog migrated to `olm.csv.metadata` (v4.17 and later) the head bundle's icon is not known:
 * that property carries no icon (opm, which pulls the image, reads it from the CSV), so opm's icon is
 * left out when opcat has none. Returns a failure, or undefined.
 */
function checkAgainstOpm(label: string, pkg: string, cfg: DeclarativeConfig): string | undefined {
  const file = join(OPM_RENDERED, `${pkg}.yaml`);
  if (!existsSync(file)) return undefined;
  const docs = readFileSync(file, "utf8")
    .split(/^---\n/m)
    .filter((d) => d !== "");
  const opmChannels = docs.filter((d) => /^schema: olm\.channel$/m.test(d)).map((d) => `---\n${d}`);
  let opmPackage = docs.filter((d) => /^schema: olm\.package$/m.test(d)).map((d) => `---\n${d}`);
  if (cfg.packages.every((p) => p.icon === undefined))
    opmPackage = opmPackage.map((d) => d.replace(/^icon:\n(?: {2}.*\n)*/m, ""));
  const none = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
  if (
    !Buffer.from(formatCatalog({ ...none, channels: cfg.channels }, "yaml")).equals(Buffer.from(opmChannels.join("")))
  )
    return `${label}: channels differ from what opm 4f9d6f22 renders (${file})`;
  if (!Buffer.from(formatCatalog({ ...none, packages: cfg.packages }, "yaml")).equals(Buffer.from(opmPackage.join(""))))
    return `${label}: package differs from what opm 4f9d6f22 renders (${file})`;
  return undefined;
}

/** Checks one pair against its exception; returns a failure or undefined. */
function checkException(
  label: string,
  ex: Exception,
  outcome: { cfg: DeclarativeConfig; committed: Buffer; known: Set<string> } | { error: Error },
): string | undefined {
  if ("error" in outcome) {
    if ("error" in ex && outcome.error instanceof OpcatError && outcome.error.code === "TEMPLATE_REUSE_NOT_FOUND")
      return outcome.error.message === ex.error
        ? undefined
        : `${label}: error ${JSON.stringify(outcome.error.message)}`;
    return `${label}: ${outcome.error.message}`;
  }
  const { cfg, committed, known } = outcome;
  if ("error" in ex) return `${label}: rendered, expected the error ${JSON.stringify(ex.error)}`;
  if ("missing" in ex) {
    const missing = [
      ...new Set(cfg.channels.flatMap((c) => (c.entries ?? []).map((e) => e.name)).filter((n) => !known.has(n))),
    ];
    return JSON.stringify(missing) === JSON.stringify(ex.missing)
      ? undefined
      : `${label}: channel entries the catalog lacks: ${JSON.stringify(missing)}`;
  }
  const { drop, linkV156: relink } = ex.olderOpm;
  if (!asOlderOpm(cfg, drop, relink).equals(committed)) return `${label}: differs even as an older opm wrote it`;
  // Each adjustment is needed.
  for (const d of drop)
    if (
      asOlderOpm(
        cfg,
        drop.filter((x) => x !== d),
        relink,
      ).equals(committed)
    )
      return `${label}: identical without dropping the package ${d}`;
  if (relink && asOlderOpm(cfg, drop, false).equals(committed)) return `${label}: identical without the v1.56 linker`;
  return undefined;
}

const skip = available();
test("community templates render byte-identical to their committed catalogs (--reuse)", { skip }, async (t) => {
  let total = 0;
  let identical = 0;
  let comparedWithOpm = 0;
  const failures: string[] = [];
  const seen = new Set<string>();
  for (const pkg of readdirSync(join(COMMUNITY, "operators")).sort()) {
    const ci = join(COMMUNITY, "operators", pkg, "ci.yaml");
    if (!existsSync(ci)) continue;
    const conf = parseGoYamlDocument(readFileSync(ci, "utf8")) as { fbc?: { catalog_mapping?: Mapping[] } } | null;
    for (const m of conf?.fbc?.catalog_mapping ?? []) {
      const tpl = join(COMMUNITY, "operators", pkg, "catalog-templates", m.template_name ?? "");
      if (!m.template_name || !existsSync(tpl)) continue;
      const text = readFileSync(tpl, "utf8");
      for (const version of m.catalog_names ?? []) {
        const catFile = join(COMMUNITY, "catalogs", version, pkg, "catalog.yaml");
        if (!existsSync(catFile)) continue;
        total++;
        const label: string = `${pkg}/${m.template_name} → ${version}`;
        const ex = EXCEPTIONS[label];
        if (ex) seen.add(label);
        const committed = readFileSync(catFile);
        const loaded = loadText(committed.toString("utf8"), catFile);
        assert.deepEqual(loaded.problems, [], label);
        let cfg: DeclarativeConfig;
        try {
          cfg = await renderTemplate(text, reuseSource(loaded.config, { reuseTags: true }), {
            type: m.type ? TYPES[m.type] : undefined,
          });
          normalizeForRender(cfg, { migrateLevel: migrateLevelFor(version) });
        } catch (e) {
          failures.push(
            ex ? (checkException(label, ex, { error: e as Error }) ?? "") : `${label}: ${(e as Error).message}`,
          );
          if (ex) t.diagnostic(`${label}: ${ex.why}`);
          continue;
        }
        if (Buffer.from(formatCatalog(cfg, "yaml")).equals(committed)) {
          if (ex) failures.push(`${label}: byte-identical now, remove it from EXCEPTIONS`);
          else identical++;
          continue;
        }
        if (!ex) {
          failures.push(`${label}: output differs`);
          continue;
        }
        const known = new Set(loaded.config.bundles.map((b) => b.name));
        failures.push(checkException(label, ex, { cfg, committed, known }) ?? "");
        if ("olderOpm" in ex) {
          const vsOpm = checkAgainstOpm(label, pkg, cfg);
          if (vsOpm === undefined && existsSync(join(OPM_RENDERED, `${pkg}.yaml`))) comparedWithOpm++;
          failures.push(vsOpm ?? "");
        }
        t.diagnostic(`${label}: ${ex.why}`);
      }
    }
  }
  t.diagnostic(`${identical}/${total} (template, catalog) pairs byte-identical`);
  const real = failures.filter((f) => f !== "");
  for (const f of real) t.diagnostic(`MISMATCH ${f}`);
  assert.deepEqual(real, []);
  assert.deepEqual([...seen].sort(), Object.keys(EXCEPTIONS).sort(), "every exception is a pair of the data");
  assert.equal(identical + seen.size, total);
  // The three older-opm pairs are also compared with what opm 4f9d6f22 renders from their templates.
  assert.equal(comparedWithOpm, 3);
  assert.ok(total > 0);
});
