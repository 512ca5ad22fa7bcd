/**
 * Go's float formatting, one function per Go verb:
 *
 * - {@link goJsonFloat}: encoding/json's float64 encoding (shortest digits, `e` form below 1e-6 or from 1e21,
 *   exponent without leading zeros);
 * - {@link goFormatFloatG}: `strconv.FormatFloat(f, 'g', -1, 32|64)` (shortest digits, `%e` form when the
 *   exponent is < -4 or >= 6, exponent with at least two digits);
 * - {@link goFloatV}: fmt's `%v` and `%g` of a float64, which are `strconv.FormatFloat(f, 'g', -1, 64)`
 *   (fmt/print.go: `case 'v': p.fmt.fmtFloat(v, size, 'g', -1)`).
 */

/** Shortest round-trip decimal digits of a finite non-zero float of the given size, and its decimal exponent. */
function shortest(f: number, bitSize: 32 | 64): { neg: boolean; digits: string; exp: number } {
  let e: string;
  if (bitSize === 64) {
    e = f.toExponential(); // JavaScript's shortest round-trip digits (closest, ties to even), as Go's for float64
  } else {
    // The correctly rounded p-digit decimal is in float32's rounding interval whenever any p-digit one is.
    e = f.toExponential(8);
    for (let p = 0; p < 8; p++) {
      const t = f.toExponential(p);
      if (Math.fround(Number(t)) === f) {
        e = t;
        break;
      }
    }
  }
  const ePos = e.indexOf("e");
  const neg = e.charCodeAt(0) === 0x2d;
  const mant = e.slice(neg ? 1 : 0, ePos);
  let digits = mant.length > 1 ? mant[0] + mant.slice(2) : mant;
  let exp = Number(e.slice(ePos + 1));
  if (bitSize === 32) [digits, exp] = halfToEven(f, digits, exp);
  return { neg, digits, exp };
}

/**
 * toExponential rounds an exact tie away from zero; Go's shortest formatting rounds it to even (when the
 * lower neighbour also reads back as the same float). `digits` (exponent `exp`) is toExponential's rounding
 * of the float32 `f`; returns Go's digits. Exact arithmetic on f = m × 2^k.
 */
function halfToEven(f: number, digits: string, exp: number): [string, number] {
  const last = digits.charCodeAt(digits.length - 1) - 0x30;
  if (last % 2 === 0) return [digits, exp]; // rounding up to an odd digit is the only way to differ
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, Math.abs(f));
  const bits = view.getUint32(0);
  const be = bits >>> 23;
  const m = BigInt(be === 0 ? bits & 0x7fffff : (bits & 0x7fffff) | 0x800000);
  const k = (be === 0 ? 1 : be) - 150;
  // The tie is |f| = (D − 1/2) × 10^q with D the digits as an integer and q the exponent of the last digit.
  const q = exp - (digits.length - 1);
  let lhs = 2n * m; // 2|f| = 2m × 2^k
  let rhs = 2n * BigInt(digits) - 1n; // × 10^q
  if (k >= 0) lhs <<= BigInt(k);
  else rhs <<= BigInt(-k);
  if (q >= 0) rhs *= 10n ** BigInt(q);
  else lhs *= 10n ** BigInt(-q);
  if (lhs !== rhs) return [digits, exp];
  const downDigits = (BigInt(digits) - 1n).toString();
  // D − 1 may lose a digit (10 → 9 is impossible here: the last digit is odd, so D − 1 keeps its length).
  const down = `${downDigits[0]}.${downDigits.slice(1)}e${q + downDigits.length - 1}`;
  if (Math.fround(Number(down)) !== Math.abs(f)) return [digits, exp];
  return [downDigits, exp];
}

/** `%e` layout of shortest digits with a two-digit minimum exponent (`1.5e-07`, `1e+21`). */
function eForm(neg: boolean, digits: string, exp: number): string {
  const m = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
  const ae = Math.abs(exp);
  return (neg ? "-" : "") + m + "e" + (exp < 0 ? "-" : "+") + (ae < 10 ? "0" + ae : String(ae));
}

/** `%f` layout of shortest digits with exactly the digits needed. */
function fForm(neg: boolean, digits: string, exp: number): string {
  const sign = neg ? "-" : "";
  if (exp < 0) return sign + "0." + "0".repeat(-exp - 1) + digits;
  if (digits.length <= exp + 1) return sign + digits + "0".repeat(exp + 1 - digits.length);
  return sign + digits.slice(0, exp + 1) + "." + digits.slice(exp + 1);
}

/** Go's float64 formatting in encoding/json (shortest round trip; `e` form below 1e-6 or from 1e21). */
export function goJsonFloat(n: number): string {
  if (Object.is(n, -0)) return "-0";
  // JavaScript's Number#toString uses the same shortest round-trip digits and the same thresholds
  // for exponent notation, and writes exponents without leading zeros as Go's cleanup does.
  return String(n);
}

/** strconv.FormatFloat(f, 'g', -1, bitSize); for 32, `f` is first rounded to float32 as Go's float32(f). */
export function goFormatFloatG(f: number, bitSize: 32 | 64 = 64): string {
  const x = bitSize === 32 ? Math.fround(f) : f;
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+Inf";
  if (x === -Infinity) return "-Inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const { neg, digits, exp } = shortest(x, bitSize);
  return exp < -4 || exp >= 6 ? eForm(neg, digits, exp) : fForm(neg, digits, exp);
}

/** fmt's `%v` (and `%g`) of a float64: strconv.FormatFloat(n, 'g', -1, 64). */
export function goFloatV(n: number): string {
  return goFormatFloatG(n, 64);
}
