import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { goFloatV, goFormatFloatG, goJsonFloat } from "./float.js";

// [float64 bits, json.Marshal (null for NaN/±Inf), FormatFloat 'g' -1 64, FormatFloat 'g' -1 32 of float32(f), %v]
// written by scripts/oracle/float.
type Vector = [string, string | null, string, string, string];
const vectors = JSON.parse(readFileSync(new URL("./testdata/float.json", import.meta.url), "utf8")) as Vector[];

function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt("0x" + hex));
  return view.getFloat64(0);
}

test("Go float formatting per verb equals Go on the oracle's float64 values", () => {
  assert.ok(vectors.length > 4000);
  for (const [bits, json, g64, g32, v] of vectors) {
    const f = fromBits(bits);
    if (json !== null) assert.equal(goJsonFloat(f), json, `json ${bits}`);
    assert.equal(goFormatFloatG(f, 64), g64, `g64 ${bits}`);
    assert.equal(goFormatFloatG(f, 32), g32, `g32 ${bits}`);
    assert.equal(goFloatV(f), v, `%v ${bits}`);
  }
});
