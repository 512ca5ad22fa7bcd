/**
 * Reading the FBC blobs of the UI's API, the same way on the server (src/web/views) and in the browser
 * (src/ui): a leaf that imports nothing, so that the browser bundle can share it.
 */

/** The value if it is a string, else "". */
export function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** A blob's properties (none when it has no list). */
export function props(b: { properties?: unknown }): { type: string; value: unknown }[] {
  return Array.isArray(b.properties) ? (b.properties as { type: string; value: unknown }[]) : [];
}

/** A bundle blob's version from its olm.package property, or "". */
export function bundleVersion(b: { properties?: unknown }): string {
  for (const p of props(b))
    if (p.type === "olm.package") return str((p.value as Record<string, unknown> | null)?.version);
  return "";
}
