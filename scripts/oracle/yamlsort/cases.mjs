// Key sets for the yamlsort oracle (run with Node 24, which strips the types of the .ts module it imports):
// keys mixing ASCII letters and digits with the characters whose letter/digit class differs between Go's
// Unicode (15.0.0 in Go 1.26) and the running Node's, so that the vectors pin Go's answer.
//   node scripts/oracle/yamlsort/cases.mjs > /tmp/keysets.json
import { GO_DIGIT_RANGES, GO_LETTER_RANGES } from "../../../src/gojson/gounicode.ts";

const ranges = (enc) => enc.split(",").map((p) => p.split("-").map((x) => parseInt(x, 36)));
const inRanges = (rs, cp) => rs.some(([lo, hi]) => cp >= lo && cp <= hi);
const goLetter = ranges(GO_LETTER_RANGES);
const goDigit = ranges(GO_DIGIT_RANGES);
const newLetters = [];
const newDigits = [];
for (let cp = 0x80; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const s = String.fromCodePoint(cp);
  if (/\p{L}/u.test(s) !== inRanges(goLetter, cp) && newLetters.length < 40) newLetters.push(s);
  if (/\p{Nd}/u.test(s) !== inRanges(goDigit, cp) && newDigits.length < 40) newDigits.push(s);
}
const known = ["é", "ß", "日", "Ж", "٣", "१", "Ⅻ", "½"]; // letters and digits both sides agree on
const sets = [];
for (let i = 0; i < newLetters.length; i++) {
  const c = newLetters[i];
  const d = newDigits[i % Math.max(newDigits.length, 1)] ?? "0";
  sets.push([`a${c}`, "a_", "a1", "ab", `a${c}b`, `x${d}`, "x5", "xa", `${c}`, "_", "Z", known[i % known.length]]);
  sets.push([`k${d}2`, "k12", "k3", `k${d}`, "k_", "kz", `${d}x`, "9x", `é${c}`, "éa", "é1"]);
}
process.stdout.write(JSON.stringify(sets) + "\n");
