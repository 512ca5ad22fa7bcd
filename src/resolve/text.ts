/**
 * The short text form of a resolveset (`opcat resolve -o text`, the default on a terminal): one line per
 * bundle (package, version, channel, catalog, why it is there), one per operand entry, then each Input
 * that did not resolve with its explanation one root cause a line, then the warnings. The full resolveset
 * is `-o yaml` / `-o json`.
 */
import type { Condition, ResolvedBundle, ResolvedOperand, ResolveSet } from "./resolver.js";

const UNSAT_PREFIX = "unable to find a solution that matches the constraints: ";

/** Rows as columns separated by two spaces (the last column unpadded). */
function table(rows: readonly string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  "))
    .map((l) => `${l}\n`)
    .join("");
}

function whyBundle(b: ResolvedBundle): string {
  const why: string[] = [];
  if (b.requestedBy.length > 0)
    why.push(`${b.requestedBy.length > 1 ? "inputs" : "input"} ${b.requestedBy.join(", ")}`);
  if (b.dependencyOf.length > 0) why.push(`needed by ${b.dependencyOf.join(", ")}`);
  if (b.action === "upgrade") why.push(`upgrades ${b.pivotFrom ?? "the installed bundle"}`);
  else if (b.action === "unchanged") why.push("installed, stays");
  else if (b.action === "force") why.push(`forced${b.pivotFrom ? ` over ${b.pivotFrom}` : ""}`);
  if (b.dryRun) why.push("dry run");
  return why.join("; ") || "-";
}

function whyOperand(o: ResolvedOperand): string {
  const why: string[] = [];
  if (o.requestedBy.length > 0) why.push(`input ${o.requestedBy.join(", ")}`);
  if (o.requiredBy.length > 0) why.push(`needed by ${o.requiredBy.join(", ")}`);
  if (o.managedBy.length > 0) why.push(`managed by ${o.managedBy.join(", ")}`);
  if (o.dryRun) why.push("dry run");
  return why.join("; ") || "-";
}

/** A failure's explanation, one sentence a line. */
function explanationLines(c: Condition): string[] {
  const body = c.message.startsWith(UNSAT_PREFIX) ? c.message.slice(UNSAT_PREFIX.length) : c.message;
  return body.split("; ").map((s) => `  - ${s}\n`);
}

/** The text form of a resolveset. */
export function resolveSetText(rs: ResolveSet): string {
  let out = "";
  if (rs.bundles.length > 0)
    out += table([
      ["PACKAGE", "VERSION", "CHANNEL", "CATALOG", "WHY"],
      ...rs.bundles.map((b) => [b.package, b.version, b.channel || "-", b.catalog || "-", whyBundle(b)]),
    ]);
  if (rs.operands.length > 0)
    out += `${out ? "\n" : ""}${table([
      ["ENTRY", "NAME", "VERSION", "CATALOG", "WHY"],
      ...rs.operands.map((o) => [o.schema, o.name, o.version, o.catalog || "-", whyOperand(o)]),
    ])}`;
  for (const st of rs.inputs) {
    const failed = st.conditions.find((c) => c.type === "ResolutionFailed" && c.status === "True");
    if (!failed) continue;
    out += `${out ? "\n" : ""}input ${st.name} is not resolvable (${failed.reason}):\n`;
    out += explanationLines(failed).join("");
    for (const i of st.instances)
      for (const c of i.conditions) if (c.status === "True") out += `  ${i.name}: ${c.type}: ${c.message}\n`;
  }
  for (const s of rs.installed)
    for (const c of s.conditions)
      if (c.status === "True" && c.type !== "ResolutionFailed") out += `installed ${s.package}: ${c.message}\n`;
  for (const w of rs.warnings) out += `warning: ${w}\n`;
  if (out === "") out = "nothing to install\n";
  return out;
}
