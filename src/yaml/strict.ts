/**
 * go-yaml v2's strict mode (`yaml.UnmarshalStrict`, which sigs.k8s.io/yaml.UnmarshalStrict uses for
 * opm's semver template): the `key "k" already set in map` errors of one document.
 *
 * Dialect note: the events come from js-yaml's parseEvents (YAML 1.2 syntax), with go-yaml v2's
 * plain-scalar resolution (`resolvePlain`) deciding which keys are equal. The document's value and
 * its syntax errors come from the go-yaml port (`parseGoYamlDocument`) first, so only documents
 * go-yaml accepts get here; the duplicate scan still trusts js-yaml's event stream for them. Moving it
 * onto the go-yaml port's events needs node line marks in goyaml/parser.ts (not there yet).
 */
import { getScalarValue, parseEvents, type Event, type ScalarEvent } from "js-yaml";
import { goQuote } from "../gojson/fmt.js";
import { formatGoFloat, resolvePlain } from "./resolve.js";

const EV_DOCUMENT = 1;
const EV_SEQUENCE = 2;
const EV_MAPPING = 3;
const EV_SCALAR = 4;
const EV_ALIAS = 5;
const EV_POP = 6;

interface MapFrame {
  kind: "map";
  keys: Set<string>;
  /** Next child is a key (true) or a value (false). */
  atKey: boolean;
  /** Identity and printable form of the pending key; undefined when it cannot collide. */
  pendingKey?: { id: string; shown: string; line: number };
  /** The pending duplicate whose value is being decoded (reported once the value is complete). */
  dup?: { shown: string; line: number };
}

interface SeqFrame {
  kind: "seq";
}

type Frame = MapFrame | SeqFrame;

function lineAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

function keyIdentity(text: string, ev: ScalarEvent): { id: string; shown: string } | undefined {
  const s = getScalarValue(text, ev);
  if (ev.style !== 1 || ev.tagStart >= 0) return { id: `str:${s}`, shown: goQuote(s) };
  const r = resolvePlain(s);
  switch (r.kind) {
    case "str":
    case "timestamp":
      return { id: `str:${s}`, shown: goQuote(s) };
    case "merge":
      return undefined;
    case "null":
      return { id: "null", shown: "<nil>" };
    case "bool":
      return { id: `bool:${String(r.value)}`, shown: String(r.value) };
    case "int":
      return { id: `int:${r.decimal ?? String(r.value)}`, shown: r.decimal ?? String(r.value) };
    case "float":
      return { id: `float:${String(r.value)}`, shown: formatGoFloat(r.value as number) };
  }
}

/**
 * go-yaml v2's strict-mode errors for one document: every mapping key that repeats an earlier key
 * of the same mapping, at the line of its value, in the order the decoder meets them (a value's
 * own duplicates first). Returns undefined when there are none or when the text does not parse
 * (the non-strict parse then reports the syntax error).
 */
export function yamlDuplicateKeyErrors(doc: string): string | undefined {
  let events: Event[];
  try {
    events = parseEvents(doc, { maxDepth: 10000 });
  } catch {
    return undefined;
  }
  const starts = [0];
  for (let i = doc.indexOf("\n"); i >= 0; i = doc.indexOf("\n", i + 1)) starts.push(i + 1);
  const errors: string[] = [];
  const stack: Frame[] = [];
  let docs = 0;

  /** A node (scalar, alias or collection) has just been completed inside the top frame. */
  const completed = (): void => {
    const top = stack[stack.length - 1];
    if (top?.kind !== "map") return;
    if (!top.atKey) {
      // a key was completed; the value comes next
      return;
    }
    if (top.dup) {
      errors.push(`line ${top.dup.line}: key ${top.dup.shown} already set in map`);
      top.dup = undefined;
    }
  };
  /** A node starts at `offset` inside the top frame. */
  const starting = (offset: number, keyEv?: ScalarEvent): void => {
    const top = stack[stack.length - 1];
    if (top?.kind !== "map") return;
    if (top.atKey) {
      top.atKey = false;
      const id = keyEv ? keyIdentity(doc, keyEv) : undefined;
      top.pendingKey = id ? { ...id, line: offset >= 0 ? lineAt(starts, offset) : 0 } : undefined;
      return;
    }
    top.atKey = true;
    const k = top.pendingKey;
    top.pendingKey = undefined;
    if (!k) return;
    if (top.keys.has(k.id)) top.dup = { shown: k.shown, line: offset >= 0 ? lineAt(starts, offset) : k.line };
    else top.keys.add(k.id);
  };

  for (const ev of events) {
    switch (ev.type) {
      case EV_DOCUMENT:
        if (++docs > 1) return errors.length > 0 ? errors.join("\n  ") : undefined;
        break;
      case EV_SCALAR: {
        const sc = ev as ScalarEvent;
        const top = stack[stack.length - 1];
        const isKey = top?.kind === "map" && top.atKey;
        starting(sc.valueStart, isKey ? sc : undefined);
        if (!isKey) completed();
        break;
      }
      case EV_ALIAS: {
        const top = stack[stack.length - 1];
        const isKey = top?.kind === "map" && top.atKey;
        starting((ev as { start?: number }).start ?? -1);
        if (!isKey) completed();
        break;
      }
      case EV_MAPPING:
      case EV_SEQUENCE: {
        starting((ev as { start: number }).start);
        stack.push(ev.type === EV_MAPPING ? { kind: "map", keys: new Set(), atKey: true } : { kind: "seq" });
        break;
      }
      case EV_POP: {
        if (stack.length === 0) break;
        stack.pop();
        const top = stack[stack.length - 1];
        // A collection used as a key leaves the frame waiting for its value.
        if (top?.kind === "map" && !top.atKey) break;
        completed();
        break;
      }
    }
  }
  return errors.length > 0 ? errors.join("\n  ") : undefined;
}
