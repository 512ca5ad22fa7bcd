/**
 * The template kinds `add-bundle` edits out of the box, each an {@link AddBundleKind}:
 *
 * - basic (`olm.template.basic`): `{schema: olm.bundle, image}` is appended to `entries` and a
 *   channel entry `{name, replaces?, skips?, skipRange?}` to each named `olm.channel` entry (a
 *   missing channel is created, appended to `entries` before the bundle, as the community
 *   pipeline does);
 * - semver (`olm.semver`): `{image}` is appended to each named archetype's bundle list (the
 *   archetype and its list are created when missing); edges are computed by the template itself;
 * - fbc (a raw FBC stream): the rendered `olm.bundle` blob is appended to the stream, and channel
 *   entries as for basic templates (missing channels are appended as new `olm.channel` blobs);
 * - graph (`olm.template.graph`): see graph.ts.
 */
import { isMap, isScalar, isSeq, type Node, type YAMLMap, type YAMLSeq } from "../../yaml/edit.js";
import { OpcatError } from "../../errors/index.js";
import { loadText } from "../../fbc/load.js";
import {
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_DEPRECATIONS,
  SCHEMA_PACKAGE,
  emptyConfig,
  type DeclarativeConfig,
} from "../../fbc/types.js";
import { formatCatalog } from "../../fbc/write.js";
import { goQuote } from "../../gojson/fmt.js";
import { findKey, pointerToken, stringAt, type EditValue, type SourceDoc } from "./edit.js";
import type { AddBundleContext, AddBundleKind, AddBundleRequest } from "./registry.js";
import { GRAPH_KIND } from "./graph.js";
import { renderBasicTemplate } from "../basic.js";
import { SCHEMA_BASIC, SCHEMA_SEMVER } from "../detect.js";
import { parseSemverTemplate, renderSemverTemplate } from "../semver.js";
import type { BundleSource, RenderedBundle } from "../source/source.js";

/** A blob of the file: its node, the document holding it and its JSON pointer. */
interface Blob {
  sd: SourceDoc;
  node: YAMLMap<unknown, unknown>;
  pointer: string;
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}

function stringList(node: unknown): string[] {
  if (!isSeq(node)) return [];
  return node.items.map((it) => (isScalar(it) ? String(it.value) : ""));
}

/** The new channel entry, keys in the community pipeline's order. */
function channelEntry(name: string, req: AddBundleRequest): { [key: string]: EditValue } {
  const e: { [key: string]: EditValue } = { name };
  if (req.replaces) e.replaces = req.replaces;
  if (req.skips && req.skips.length > 0) e.skips = [...req.skips];
  if (req.skipRange) e.skipRange = req.skipRange;
  return e;
}

function describeEdges(replaces: string, skips: string[], skipRange: string): string {
  const parts: string[] = [];
  if (replaces) parts.push(`replaces ${goQuote(replaces)}`);
  if (skips.length > 0) parts.push(`skips [${skips.map(goQuote).join(", ")}]`);
  if (skipRange) parts.push(`skipRange ${goQuote(skipRange)}`);
  return parts.length > 0 ? parts.join(", ") : "no edges";
}

/**
 * Adds the channel entry to each requested channel (basic templates and raw FBC): an entry of the
 * same name with the same edges is already present (skips compare as a set); with other edges it
 * is a conflict; a `replaces` target that is not in the channel is a conflict; a missing channel
 * is created through `appendChannel`.
 */
function planChannelEntries(
  ctx: AddBundleContext,
  blobs: Blob[],
  appendChannel: (ch: { [key: string]: EditValue }, pkg: string) => void,
): void {
  const req = ctx.request;
  const name = ctx.bundleName;
  if (name === undefined) {
    ctx.fail(
      "unreachable-image",
      "TEMPLATE_ADD_UNREACHABLE",
      "the bundle's name is needed for its channel entries; render the image or give --name",
    );
    return;
  }
  const packages = blobs
    .filter((b) => stringAt(b.node, "schema") === SCHEMA_PACKAGE)
    .map((b) => stringAt(b.node, "name") ?? "");
  const pkg = ctx.bundle?.package ?? (packages.length === 1 ? packages[0] : undefined);
  const entry = channelEntry(name, req);
  const wantSkips = [...new Set(req.skips ?? [])].sort();
  // Every entry name of every channel of the package.
  const known = new Set<string>();
  for (const b of blobs) {
    if (stringAt(b.node, "schema") !== SCHEMA_CHANNEL || (pkg !== undefined && stringAt(b.node, "package") !== pkg))
      continue;
    const es = findKey(b.node, "entries")?.value;
    if (isSeq(es)) for (const e of es.items) known.add(stringAt(e, "name") ?? "");
  }
  for (const ch of unique(req.channels)) {
    const matches = blobs.filter(
      (b) =>
        stringAt(b.node, "schema") === SCHEMA_CHANNEL &&
        stringAt(b.node, "name") === ch &&
        (pkg === undefined || stringAt(b.node, "package") === pkg),
    );
    if (matches.length === 0) {
      if (req.replaces && !known.has(req.replaces)) {
        ctx.fail(
          "conflict",
          "TEMPLATE_ADD_REPLACES_MISSING",
          `${goQuote(name)} cannot replace ${goQuote(req.replaces)} in new channel ` +
            `${goQuote(ch)}: no channel of the template has an entry ${goQuote(req.replaces)}`,
          "publish the replaced bundle first, or correct replaces",
        );
        continue;
      }
      if (req.replaces)
        ctx.warn(
          "TEMPLATE_ADD_REPLACES_OTHER_CHANNEL",
          `new channel ${goQuote(ch)}: ${goQuote(name)} replaces a bundle of another channel`,
        );
      if (pkg === undefined) {
        ctx.fail(
          "invalid-input",
          "TEMPLATE_ADD_NO_PACKAGE",
          `channel ${goQuote(ch)} does not exist and the package to create it in is ` +
            `not known (render the image, or keep exactly one olm.package in the template)`,
        );
        continue;
      }
      appendChannel({ schema: SCHEMA_CHANNEL, name: ch, package: pkg, entries: [entry] }, pkg);
      continue;
    }
    if (matches.length > 1) {
      ctx.fail("invalid-input", "TEMPLATE_ADD_STRUCTURE", `channel ${goQuote(ch)} is defined ${matches.length} times`);
      continue;
    }
    const { sd, node, pointer } = matches[0];
    const ep = findKey(node, "entries");
    const entriesNode = ep?.value as Node | null | undefined;
    const items = isSeq(entriesNode) ? (entriesNode.items as unknown[]) : [];
    const existing = items.find((e) => stringAt(e, "name") === name);
    if (existing !== undefined) {
      const replaces = stringAt(existing, "replaces") ?? "";
      const skips = stringList(findKey(existing, "skips")?.value);
      const skipRange = stringAt(existing, "skipRange") ?? "";
      const sameSkips = [...new Set(skips)].sort().join("\u0000") === wantSkips.join("\u0000");
      if (replaces !== (req.replaces ?? "") || skipRange !== (req.skipRange ?? "") || !sameSkips) {
        ctx.fail(
          "conflict",
          "TEMPLATE_ADD_EDGE_CONFLICT",
          `channel ${goQuote(ch)} already has an entry for ${goQuote(name)} with ` +
            `${describeEdges(replaces, skips, skipRange)}; requested ` +
            `${describeEdges(req.replaces ?? "", req.skips ?? [], req.skipRange ?? "")}`,
          "edit the entry by hand, or publish with the edges it already has",
        );
      }
      continue;
    }
    if (req.replaces && !items.some((e) => stringAt(e, "name") === req.replaces)) {
      // Replacing a bundle of another channel is legitimate FBC (and the community data does it);
      // a target no channel knows is a mistake.
      if (!known.has(req.replaces)) {
        ctx.fail(
          "conflict",
          "TEMPLATE_ADD_REPLACES_MISSING",
          `${goQuote(name)} cannot replace ${goQuote(req.replaces)} in channel ` +
            `${goQuote(ch)}: no channel of the template has an entry ${goQuote(req.replaces)}`,
          "publish the replaced bundle first, or correct replaces",
        );
        continue;
      }
      ctx.warn(
        "TEMPLATE_ADD_REPLACES_OTHER_CHANNEL",
        `channel ${goQuote(ch)} has no entry ${goQuote(req.replaces)}: ` +
          `${goQuote(name)} replaces a bundle of another channel`,
      );
    }
    const desc =
      `added ${goQuote(name)} to channel ${goQuote(ch)} ` +
      `(${describeEdges(req.replaces ?? "", req.skips ?? [], req.skipRange ?? "")})`;
    if (ep === undefined) {
      ctx.edits.addToMap(sd, node, "entries", [entry]);
      ctx.change(`${pointer}/entries`, [entry], desc);
    } else if (isSeq(entriesNode) && (entriesNode.items.length > 0 || entriesNode.flow)) {
      ctx.edits.appendToSeq(sd, entriesNode as YAMLSeq<unknown>, entry);
      ctx.change(`${pointer}/entries/-`, entry, desc);
    } else if (
      entriesNode === null ||
      entriesNode === undefined ||
      (isScalar(entriesNode) && (entriesNode.value === null || entriesNode.value === ""))
    ) {
      ctx.edits.replaceNullValue(sd, node, ep, [entry]);
      ctx.change(`${pointer}/entries`, [entry], desc);
    } else {
      ctx.fail("invalid-input", "TEMPLATE_ADD_STRUCTURE", `channel ${goQuote(ch)}: entries is not a list`);
    }
  }
}

/** A source for structural checks: every image renders to an empty bundle. */
const STUB_SOURCE: BundleSource = {
  render(image: string): Promise<RenderedBundle> {
    return Promise.resolve({ schema: SCHEMA_BUNDLE, name: "", package: "", image, properties: [], relatedImages: [] });
  },
};

function rootMap(ctx: AddBundleContext): { sd: SourceDoc; root: YAMLMap<unknown, unknown> } | undefined {
  const sd = ctx.file.docs[0];
  const root = sd?.doc.contents;
  if (!isMap(root)) {
    ctx.fail("invalid-input", "TEMPLATE_ADD_STRUCTURE", "the template is not a mapping");
    return undefined;
  }
  return { sd, root };
}

function keyName(p: { key: unknown }): string {
  return isScalar(p.key) ? String(p.key.value) : String(p.key);
}

/** The basic template (`olm.template.basic`). */
export const BASIC_KIND: AddBundleKind = {
  name: "basic",
  matches: (schema) => schema === SCHEMA_BASIC,
  needs: () => "name",
  async check(text: string): Promise<void> {
    await renderBasicTemplate(text, STUB_SOURCE);
  },
  render: (text, source) => renderBasicTemplate(text, source),
  plan(ctx: AddBundleContext): void {
    const r = rootMap(ctx);
    if (!r) return;
    const { sd, root } = r;
    const ep = findKey(root, "entries");
    if (!ep || !isSeq(ep.value) || (ep.value.items.length === 0 && !ep.value.flow)) {
      ctx.fail(
        "invalid-input",
        "TEMPLATE_ADD_STRUCTURE",
        "the basic template has no entries list to add the bundle to",
      );
      return;
    }
    const seq = ep.value as YAMLSeq<unknown>;
    const key = pointerToken(keyName(ep));
    const blobs: Blob[] = [];
    seq.items.forEach((n, i) => {
      if (isMap(n)) blobs.push({ sd, node: n, pointer: `/${key}/${i}` });
    });
    planChannelEntries(ctx, blobs, (ch) => {
      ctx.edits.appendToSeq(sd, seq, ch);
      ctx.change(
        `/${key}/-`,
        ch,
        `created channel ${goQuote(ch.name as string)} with ${goQuote(ctx.bundleName ?? "")}`,
      );
    });
    const img = ctx.request.image;
    if (!blobs.some((b) => stringAt(b.node, "schema") === SCHEMA_BUNDLE && stringAt(b.node, "image") === img)) {
      const value = { schema: SCHEMA_BUNDLE, image: img };
      ctx.edits.appendToSeq(sd, seq, value);
      ctx.change(`/${key}/-`, value, `added bundle image ${goQuote(img)}`);
    }
  },
};

const ARCHETYPES = ["candidate", "fast", "stable"];

function capitalised(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The semver template (`olm.semver`). */
export const SEMVER_KIND: AddBundleKind = {
  name: "semver",
  matches: (schema) => schema === SCHEMA_SEMVER,
  needs: () => "nothing",
  check(text: string): void {
    parseSemverTemplate(text);
  },
  render: (text, source) => renderSemverTemplate(text, source),
  plan(ctx: AddBundleContext): void {
    const req = ctx.request;
    if (req.replaces || (req.skips && req.skips.length > 0) || req.skipRange) {
      ctx.warn(
        "TEMPLATE_ADD_EDGES_IGNORED",
        "a semver template computes its own edges: replaces, skips and skipRange are ignored",
      );
    }
    const r = rootMap(ctx);
    if (!r) return;
    const { sd, root } = r;
    // New keys follow the template's spelling: `Schema:`/`Fast:`/`Bundles:`/`Image:` or lower case.
    const upper = root.items.some((p) => /^[A-Z]/.test(keyName(p)));
    const spell = (s: string): string => (upper ? capitalised(s) : s);
    const archetypes: string[] = [];
    for (const ch of unique(req.channels)) {
      const a = ch.toLowerCase();
      if (!ARCHETYPES.includes(a)) {
        ctx.fail(
          "invalid-input",
          "TEMPLATE_ADD_CHANNEL",
          `${goQuote(ch)} is not a semver template channel: use Candidate, Fast or Stable`,
        );
        continue;
      }
      if (!archetypes.includes(a)) archetypes.push(a);
    }
    const img = req.image;
    for (const a of archetypes) {
      const ap = findKey(root, a);
      const bundles = (imageKey: string): { [key: string]: EditValue }[] => [{ [imageKey]: img }];
      const desc = `added ${goQuote(img)} to the ${capitalised(a)} bundles`;
      if (!ap) {
        const value = { [spell("bundles")]: bundles(spell("image")) };
        ctx.edits.addToMap(sd, root, spell(a), value);
        ctx.change(`/${pointerToken(spell(a))}`, value, desc);
        continue;
      }
      const k = pointerToken(keyName(ap));
      const av = ap.value as Node | null;
      if (av === null || (isScalar(av) && av.value === null)) {
        const value = { [spell("bundles")]: bundles(spell("image")) };
        ctx.edits.replaceNullValue(sd, root, ap, value);
        ctx.change(`/${k}`, value, desc);
        continue;
      }
      if (!isMap(av)) {
        ctx.fail("invalid-input", "TEMPLATE_ADD_STRUCTURE", `${keyName(ap)} is not a mapping`);
        continue;
      }
      const bp = findKey(av, "bundles");
      if (!bp) {
        const value = bundles(spell("image"));
        ctx.edits.addToMap(sd, av, spell("bundles"), value);
        ctx.change(`/${k}/${pointerToken(spell("bundles"))}`, value, desc);
        continue;
      }
      const bk = pointerToken(keyName(bp));
      const bv = bp.value as Node | null;
      if (bv === null || (isScalar(bv) && bv.value === null)) {
        const value = bundles(spell("image"));
        ctx.edits.replaceNullValue(sd, av, bp, value);
        ctx.change(`/${k}/${bk}`, value, desc);
        continue;
      }
      if (!isSeq(bv)) {
        ctx.fail("invalid-input", "TEMPLATE_ADD_STRUCTURE", `${keyName(ap)}.${keyName(bp)} is not a list`);
        continue;
      }
      if (bv.items.some((it) => stringAt(it, "image") === img)) continue;
      // The image key is spelled like the siblings'.
      const sibling = bv.items.map((it) => findKey(it, "image")).find((p) => p !== undefined);
      const value = { [sibling ? keyName(sibling) : spell("image")]: img };
      ctx.edits.appendToSeq(sd, bv as YAMLSeq<unknown>, value);
      ctx.change(`/${k}/${bk}/-`, value, desc);
    }
  },
};

const FBC_SCHEMAS = new Set([SCHEMA_PACKAGE, SCHEMA_CHANNEL, SCHEMA_BUNDLE, SCHEMA_DEPRECATIONS]);

/** The last load, reused while one text goes through check, plan and render. */
let lastLoad: { text: string; cfg: DeclarativeConfig } | undefined;

function loadOrThrow(text: string): DeclarativeConfig {
  if (lastLoad?.text === text) return lastLoad.cfg;
  const res = loadText(text, "-");
  const errors = res.problems.filter((p) => p.severity === "error");
  if (errors.length > 0) throw new OpcatError(errors[0].code, errors[0].message, { problems: errors, kind: "invalid" });
  lastLoad = { text, cfg: res.config };
  return res.config;
}

/** A raw FBC file: a YAML or JSON stream of olm.* blobs. */
export const FBC_KIND: AddBundleKind = {
  name: "fbc",
  matches: (schema) => FBC_SCHEMAS.has(schema),
  needs: () => "bundle",
  check(text: string): void {
    loadOrThrow(text);
  },
  // A fresh copy: validation must not see (or change) the cached one.
  render: (text) => Promise.resolve(loadText(text, "-").config),
  plan(ctx: AddBundleContext): void {
    const b = ctx.bundle;
    if (!b) {
      ctx.fail("unreachable-image", "TEMPLATE_ADD_UNREACHABLE", "a raw FBC file needs the rendered bundle");
      return;
    }
    const format = ctx.file.json ? "json" : "yaml";
    // Only package and channel blobs are parsed for editing; bundles (the bulk of a catalog) are
    // read with the fast loader.
    const blobs: Blob[] = [];
    ctx.file.docs.forEach((sd, i) => {
      const hint = sd.schemaHint;
      if (hint !== undefined && hint !== SCHEMA_CHANNEL && hint !== SCHEMA_PACKAGE) return;
      if (isMap(sd.doc.contents)) blobs.push({ sd, node: sd.doc.contents, pointer: `/${i}` });
    });
    const img = ctx.request.image;
    let present = false;
    for (const x of loadOrThrow(ctx.file.text).bundles) {
      if (x.name === b.name && (x.package === "" ? b.package : x.package) === b.package) {
        if (x.image === img) present = true;
        else
          ctx.fail(
            "conflict",
            "TEMPLATE_ADD_BUNDLE_CONFLICT",
            `bundle ${goQuote(b.name)} is already in the catalog with image ${goQuote(x.image)}`,
          );
      } else if (x.image === img) {
        ctx.fail(
          "conflict",
          "TEMPLATE_ADD_BUNDLE_CONFLICT",
          `image ${goQuote(img)} is already in the catalog as bundle ${goQuote(x.name)}, not ${goQuote(b.name)}`,
        );
      }
    }
    planChannelEntries(ctx, blobs, (ch, pkg) => {
      const cfg = emptyConfig();
      const entries = (ch.entries as { [key: string]: EditValue }[]).map((e) => ({
        name: e.name as string,
        replaces: (e.replaces as string | undefined) ?? "",
        skips: (e.skips as string[] | undefined) ?? [],
        skipRange: (e.skipRange as string | undefined) ?? "",
      }));
      cfg.channels.push({ schema: SCHEMA_CHANNEL, name: ch.name as string, package: pkg, entries, properties: [] });
      ctx.edits.appendDocument(formatCatalog(cfg, format));
      ctx.change("/-", ch, `created channel ${goQuote(ch.name as string)} with ${goQuote(b.name)}`);
    });
    if (!present) {
      const cfg = emptyConfig();
      const { loc: _loc, ...blob } = b as RenderedBundle & { loc?: unknown };
      cfg.bundles.push({ ...blob, schema: SCHEMA_BUNDLE });
      ctx.edits.appendDocument(formatCatalog(cfg, format));
      ctx.change(
        "/-",
        { schema: SCHEMA_BUNDLE, name: b.name, package: b.package, image: b.image },
        `added bundle ${goQuote(b.name)} (${goQuote(img)})`,
      );
    }
  },
};

/** The kinds built in, in the order they are tried. */
export const BUILTIN_KINDS: readonly AddBundleKind[] = [BASIC_KIND, SEMVER_KIND, FBC_KIND, GRAPH_KIND];
