/** JSON helpers for objects read from and written to the API server. */

/** JSON with every object's keys sorted (the API server returns objects' keys sorted; a request may not). */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v ?? null, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : x,
  );
}

/** Deep equality of JSON values, whatever the order of their keys. */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
