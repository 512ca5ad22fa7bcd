/**
 * The tables of `opm alpha list packages|channels|bundles` (operator-registry alpha/action/list.go),
 * byte for byte: rows sorted as opm sorts them and laid out by a port of Go's text/tabwriter with
 * opm's settings (min width 0, tab width 4, padding 2, pad char space, no flags).
 */
import { goQuote } from "../gojson/fmt.js";
import { foldFieldName, goFoldEqual } from "../gojson/unicode.js";
import { SemverError, tryParsePRVersion, tryParseTolerant } from "../semver/index.js";
import { OpcatError } from "../errors/index.js";
import {
  byteCompare,
  channelHead,
  type Model,
  type ModelBundle,
  type ModelChannel,
  type ModelPackage,
} from "./model.js";
import { bundleCsvJson } from "./objects.js";

/** `opm alpha list packages`: NAME, DISPLAY NAME (of the default channel head's CSV), DEFAULT CHANNEL. */
export function listPackages(model: Model): string {
  return tabwriterFormat(packagesTable(model));
}

function packagesTable(model: Model): string {
  const pkgs = [...model.values()].sort((a, b) => byteCompare(a.name, b.name));
  let text = "NAME\tDISPLAY NAME\tDEFAULT CHANNEL\n";
  for (const p of pkgs) text += `${p.name}\t${displayName(p)}\t${p.defaultChannel?.name ?? ""}\n`;
  return text;
}

/** `opm alpha list channels [pkg]`: PACKAGE, CHANNEL, HEAD (or `ERROR: <why there is no single head>`). */
export function listChannels(model: Model, packageName?: string): string {
  return tabwriterFormat(channelsTable(model, packageName));
}

function channelsTable(model: Model, packageName?: string): string {
  const channels: ModelChannel[] = [];
  for (const p of selectPackages(model, packageName)) for (const c of p.channels.values()) channels.push(c);
  channels.sort((a, b) => byteCompare(a.package.name, b.package.name) || byteCompare(a.name, b.name));
  let text = "PACKAGE\tCHANNEL\tHEAD\n";
  for (const c of channels) {
    const h = channelHead(c);
    text += `${c.package.name}\t${c.name}\t${h.head ? h.head.name : `ERROR: ${h.error}`}\n`;
  }
  return text;
}

/** `opm alpha list bundles [pkg]`: one row per bundle and channel with its upgrade edges and image. */
export function listBundles(model: Model, packageName?: string): string {
  return tabwriterFormat(bundlesTable(model, packageName));
}

function bundlesTable(model: Model, packageName?: string): string {
  const bundles: ModelBundle[] = [];
  for (const p of selectPackages(model, packageName))
    for (const c of p.channels.values()) for (const b of c.bundles.values()) bundles.push(b);
  bundles.sort(
    (a, b) =>
      byteCompare(a.package.name, b.package.name) ||
      byteCompare(a.channel.name, b.channel.name) ||
      byteCompare(a.name, b.name),
  );
  const rows = ["PACKAGE\tCHANNEL\tBUNDLE\tREPLACES\tSKIPS\tSKIP RANGE\tIMAGE\n"];
  for (const b of bundles) {
    rows.push(
      `${b.package.name}\t${b.channel.name}\t${b.name}\t${b.replaces}` +
        `\t${b.skips.join(",")}\t${b.skipRange}\t${b.image}\n`,
    );
  }
  return rows.join("");
}

/**
 * The rows of `list packages|channels|bundles` as JSON objects (`-o json`): the same columns as the
 * table, keys in camelCase (`name`, `displayName`, `defaultChannel`; `package`, `channel`, `head`;
 * `bundle`, `replaces`, `skips` (a list), `skipRange`, `image`).
 */
export function listJson(
  kind: "packages" | "channels" | "bundles",
  model: Model,
  packageName?: string,
): Record<string, unknown>[] {
  const table =
    kind === "packages"
      ? packagesTable(model)
      : kind === "channels"
        ? channelsTable(model, packageName)
        : bundlesTable(model, packageName);
  const [header, ...lines] = table.replace(/\n$/, "").split("\n");
  const keys = header.split("\t").map((h) => h.toLowerCase().replace(/ (\w)/g, (_, c: string) => c.toUpperCase()));
  return lines.map((line) => {
    const cells = line.split("\t");
    const o: Record<string, unknown> = {};
    keys.forEach((k, i) => {
      o[k] = k === "skips" ? (cells[i] ? cells[i].split(",") : []) : cells[i];
    });
    return o;
  });
}

function selectPackages(model: Model, packageName: string | undefined): Iterable<ModelPackage> {
  if (packageName === undefined || packageName === "") return model.values();
  const p = model.get(packageName);
  if (!p) throw new OpcatError("LIST_PACKAGE_NOT_FOUND", `package ${goQuote(packageName)} not found`);
  return [p];
}

/** opm's getDisplayName: `spec.displayName` of the default channel head's CSV, "" when unavailable. */
function displayName(p: ModelPackage): string {
  if (!p.defaultChannel) return "";
  const { head } = channelHead(p.defaultChannel);
  if (!head?.source) return "";
  const csv = bundleCsvJson(head.source);
  return csv === "" ? "" : csvDisplayName(csv);
}

/**
 * `spec.displayName` as Go gets it by decoding the CSV JSON into operator-framework/api's
 * ClusterServiceVersion: "" when that decoding fails. The decoding is checked against the CSV's
 * Go types for `kind`/`apiVersion`, `metadata`, the scalar, list and map fields of `spec`
 * (`spec.version` must be a tolerant SemVer, `spec.release` dot-separated pre-release identifiers) and
 * the shape of `status`; nested install strategy and API descriptions are only checked to be
 * objects/arrays. Field names match case-insensitively as in encoding/json, the last match winning.
 */
export function csvDisplayName(csvJson: string): string {
  let v: unknown;
  try {
    v = JSON.parse(csvJson);
  } catch {
    return "";
  }
  if (!decodes(v, CSV_SCHEMA)) return "";
  let name = "";
  if (isObject(v)) {
    for (const [k, spec] of Object.entries(v)) {
      if (!goFoldEqual(k, "spec") || !isObject(spec)) continue;
      for (const [sk, sv] of Object.entries(spec))
        if (goFoldEqual(sk, "displayName") && typeof sv === "string") name = sv;
    }
  }
  return name;
}

/** A Go type, for checking that encoding/json would decode a value into it without error. */
type GoType =
  | "string"
  | "int"
  | "bool"
  | "time"
  | "version"
  | "release"
  | "any"
  | { struct: Record<string, GoType> }
  | { slice: GoType }
  | { map: GoType };

const str: GoType = "string";
const strs: GoType = { slice: "string" };
const strMap: GoType = { map: "string" };
const struct = (fields: Record<string, GoType>): GoType => ({ struct: fields });
const objects: GoType = { slice: { struct: {} } };

const CSV_SCHEMA: GoType = struct({
  kind: str,
  apiversion: str,
  metadata: struct({
    name: str,
    generatename: str,
    namespace: str,
    selflink: str,
    uid: str,
    resourceversion: str,
    generation: "int",
    creationtimestamp: "time",
    deletiontimestamp: "time",
    deletiongraceperiodseconds: "int",
    labels: strMap,
    annotations: strMap,
    ownerreferences: objects,
    finalizers: strs,
    managedfields: objects,
  }),
  spec: struct({
    install: struct({
      strategy: str,
      spec: struct({ deployments: objects, permissions: objects, clusterpermissions: objects }),
    }),
    version: "version",
    release: "release",
    maturity: str,
    customresourcedefinitions: struct({ owned: objects, required: objects }),
    apiservicedefinitions: struct({ owned: objects, required: objects }),
    webhookdefinitions: objects,
    nativeapis: { slice: struct({ group: str, version: str, kind: str }) },
    minkubeversion: str,
    displayname: str,
    description: str,
    keywords: strs,
    maintainers: { slice: struct({ name: str, email: str }) },
    provider: struct({ name: str, url: str }),
    links: { slice: struct({ name: str, url: str }) },
    icon: { slice: struct({ base64data: str, mediatype: str }) },
    installmodes: { slice: struct({ type: str, supported: "bool" }) },
    replaces: str,
    labels: strMap,
    annotations: strMap,
    selector: struct({
      matchlabels: strMap,
      matchexpressions: { slice: struct({ key: str, operator: str, values: strs }) },
    }),
    cleanup: struct({ enabled: "bool" }),
    skips: strs,
    relatedimages: { slice: struct({ name: str, image: str }) },
  }),
  status: struct({}),
});

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

function decodes(v: unknown, t: GoType): boolean {
  if (t === "any") return true;
  switch (t) {
    case "string":
      return v === null || typeof v === "string";
    case "int":
      return v === null || (typeof v === "number" && Number.isInteger(v));
    case "bool":
      return v === null || typeof v === "boolean";
    case "time": {
      // metav1.Time: null, or an RFC 3339 string.
      if (v === null) return true;
      if (typeof v !== "string") return false;
      const m = RFC3339.exec(v);
      return (
        m !== null && +m[2] >= 1 && +m[2] <= 12 && +m[3] >= 1 && +m[3] <= 31 && +m[4] < 24 && +m[5] < 60 && +m[6] < 60
      );
    }
    case "version":
      // OperatorVersion.UnmarshalJSON: a JSON string (null reads as "") parsed with ParseTolerant.
      return (v === null || typeof v === "string") && !(tryParseTolerant(v ?? "") instanceof SemverError);
    case "release":
      // OperatorRelease.UnmarshalJSON: every dot-separated segment a valid pre-release identifier.
      return (
        (v === null || typeof v === "string") &&
        (v ?? "").split(".").every((seg) => !(tryParsePRVersion(seg) instanceof SemverError))
      );
  }
  if (v === null) return true;
  if ("slice" in t) return Array.isArray(v) && v.every((x) => decodes(x, t.slice));
  if (!isObject(v)) return false;
  if ("map" in t) return Object.values(v).every((x) => decodes(x, t.map));
  for (const [k, x] of Object.entries(v)) {
    const ft = t.struct[foldFieldName(k)];
    if (ft !== undefined && !decodes(x, ft)) return false;
  }
  return true;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Go's text/tabwriter with opm's settings (minwidth 0, tabwidth 4, padding 2, padchar ' ', flags 0)
 * applied to `text` followed by Flush: tab-terminated cells are aligned per column block, widths
 * counted in runes, the last cell of a line is not aligned; `\v` ends a cell like `\t` and `\f`
 * ends a line and a column block.
 */
export function tabwriterFormat(text: string, opts: { minwidth?: number; padding?: number } = {}): string {
  const tw = new TabWriter(opts.minwidth ?? 0, opts.padding ?? 2);
  tw.write(text);
  tw.flush();
  return tw.out.join("");
}

interface Cell {
  text: string;
  width: number;
  htab: boolean;
}

class TabWriter {
  readonly out: string[] = [];
  private lines: Cell[][] = [[]];
  private cell = "";
  private widths: number[] = [];

  constructor(
    private readonly minwidth: number,
    private readonly padding: number,
  ) {}

  write(text: string): void {
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      // '\t', '\v', '\n', '\f'
      if (ch !== 9 && ch !== 11 && ch !== 10 && ch !== 12) continue;
      this.cell += text.slice(start, i);
      start = i + 1;
      const ncells = this.terminateCell(ch === 9);
      if (ch === 10 || ch === 12) {
        this.lines.push([]);
        if (ch === 12 || ncells === 1) this.flushLines();
      }
    }
    this.cell += text.slice(start);
  }

  flush(): void {
    if (this.cell.length > 0) this.terminateCell(false);
    this.flushLines();
  }

  private terminateCell(htab: boolean): number {
    const line = this.lines[this.lines.length - 1];
    line.push({ text: this.cell, width: runeCount(this.cell), htab });
    this.cell = "";
    return line.length;
  }

  private flushLines(): void {
    this.format(0, this.lines.length);
    this.lines = [[]];
    this.widths = [];
  }

  private format(line0: number, line1: number): void {
    const column = this.widths.length;
    for (let row = line0; row < line1; row++) {
      if (column >= this.lines[row].length - 1) continue;
      this.writeLines(line0, row);
      line0 = row;
      let width = this.minwidth;
      for (; row < line1; row++) {
        const line = this.lines[row];
        if (column >= line.length - 1) break;
        const w = line[column].width + this.padding;
        if (w > width) width = w;
      }
      this.widths.push(width);
      this.format(line0, row);
      this.widths.pop();
      line0 = row;
    }
    this.writeLines(line0, line1);
  }

  private writeLines(line0: number, line1: number): void {
    const out = this.out;
    for (let i = line0; i < line1; i++) {
      const line = this.lines[i];
      for (let j = 0; j < line.length; j++) {
        const c = line[j];
        if (c.text.length > 0) out.push(c.text);
        if (j < this.widths.length) out.push(" ".repeat(this.widths[j] - c.width));
      }
      // The last line is the incomplete one; its (empty) pending cell is all that follows.
      if (i + 1 !== this.lines.length) out.push("\n");
    }
  }
}

/** Number of Unicode code points (Go's utf8.RuneCountInString for well-formed text). */
function runeCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}
