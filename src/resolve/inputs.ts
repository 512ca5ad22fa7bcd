/**
 * Resolver inputs in the shapes of the Deppy strawman (docs/cluster.md): `Input` (constraints
 * `olm.catalog`, `olm.packageVersion`, `olm.name`, `olm.cel`, `olm.rego`, and docs/operands.md's
 * `olm.operand` `{name, version?}`: an operand version the Input's operator must manage), `InputClass`
 * (`force`, `generateInputsForDependencies`, `dryRun`, `trace`, class constraints), the porcelain
 * `Operator`, and the installed operators and cluster description.
 */
import { decodeStream } from "../yaml/index.js";
import type { JsonValue } from "../fbc/types.js";

/** One constraint of an Input or InputClass: `{type, value}`. */
export interface InputConstraint {
  type: string;
  value: JsonValue;
}

export interface Input {
  name: string;
  /** Defaults to `subscription`. */
  inputClass: string;
  constraints: InputConstraint[];
}

export interface InputClassParameters {
  /** Install every matching bundle directly; no dependency resolution, may leave the upgrade graph. */
  force: boolean;
  /** Dependencies get Inputs of their own (they are kept up to date independently). */
  generateInputsForDependencies: boolean;
  /** Resolve but do not apply (the resolveset is marked as a dry run). */
  dryRun: boolean;
  /** Include the solver's search trace in the result. */
  trace: boolean;
  /**
   * opcat extension: `newest` (default) prefers the newest dependencies; `minimal` prefers the lowest
   * version satisfying each dependency and keeps installed dependencies where they are.
   */
  dependencyPreference?: "newest" | "minimal";
  /**
   * Class constraints, added to every Input of the class. `minKubeVersion` / `minOCPVersion` (a
   * version, optionally written `>= x.y`) make the resolver assume at least that cluster version.
   */
  constraints: InputConstraint[];
}

export interface InputClass {
  name: string;
  parameters: InputClassParameters;
}

/** An operator already installed on the cluster. */
export interface InstalledOperator {
  package: string;
  /** The installed bundle's name. */
  bundle: string;
  version?: string;
  /** The catalog it came from (preferred when several have the bundle). */
  catalog?: string;
  channel?: string;
  /** Keep it up to date even without an Input (an Input generated for a dependency). */
  subscribed?: boolean;
  /**
   * The installed bundle's properties as the cluster records them (docs/cluster.md: the `olm.properties`
   * annotation of its Bundle, which a user may edit). When given they replace the catalog's
   * properties of that bundle: what it provides and requires is read from them.
   */
  properties?: { type: string; value: JsonValue }[];
}

/** The cluster the resolution targets. */
export interface ClusterDescription {
  kubernetesVersion?: string;
  openshiftVersion?: string;
}

const base = {
  force: false,
  generateInputsForDependencies: false,
  dryRun: false,
  trace: false,
  constraints: [] as InputConstraint[],
};

/**
 * The default InputClasses of the strawman. The design lists class constraints such as
 * `minKubeVersion >= 1.20` as illustrations; they are not applied here (opcat has no default
 * cluster). `minimal-version` resolves dependencies (its user stories install them) with the
 * minimal preference; `dry-run-next` assumes the next minor Kubernetes/OpenShift release of the
 * described cluster.
 */
export const DEFAULT_INPUT_CLASSES: readonly InputClass[] = [
  { name: "subscription", parameters: { ...base, generateInputsForDependencies: true } },
  { name: "force", parameters: { ...base, force: true } },
  { name: "minimal-version", parameters: { ...base, dependencyPreference: "minimal" } },
  { name: "dry-run", parameters: { ...base, dryRun: true } },
  {
    name: "dry-run-next",
    parameters: { ...base, dryRun: true, constraints: [{ type: "olm.cluster.nextMinor", value: true }] },
  },
];

/** Everything an input file may hold. */
export interface InputDocuments {
  inputs: Input[];
  classes: InputClass[];
  installed: InstalledOperator[];
  cluster?: ClusterDescription;
  /** Problems, one sentence each (`<file> document <n>: …`). */
  errors: string[];
}

type Obj = { [k: string]: JsonValue };
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v: unknown): string | undefined =>
  typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined;

function constraintsFrom(v: JsonValue | undefined, where: string, errors: string[]): InputConstraint[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    errors.push(`${where}: constraints must be a list`);
    return [];
  }
  const out: InputConstraint[] = [];
  v.forEach((c, i) => {
    if (!isObj(c) || typeof c.type !== "string") errors.push(`${where}: constraints[${i}] must have a string "type"`);
    else out.push({ type: c.type, value: c.value ?? null });
  });
  return out;
}

function bool(v: JsonValue | undefined, def: boolean): boolean {
  return typeof v === "boolean" ? v : def;
}

/** Where each Input (or Operator) name of a document set was defined first: names must be unique. */
const inputOrigins = new WeakMap<InputDocuments, Map<string, string>>();

function addInput(into: InputDocuments, input: Input, where: string, kind: string): void {
  let seen = inputOrigins.get(into);
  if (!seen) inputOrigins.set(into, (seen = new Map()));
  const first = seen.get(input.name);
  if (first !== undefined && input.name !== "") {
    into.errors.push(
      `${where}: ${kind} ${input.name}: the name is already used by ${first}; Input and Operator names must be unique`,
    );
    return;
  }
  seen.set(input.name, `${where} (${kind} ${input.name})`);
  into.inputs.push(input);
}

/** Reads one parsed document into `into`. */
export function addDocument(doc: JsonValue, where: string, into: InputDocuments): void {
  if (doc === null || doc === undefined) return;
  if (Array.isArray(doc)) {
    doc.forEach((d, i) => addDocument(d, `${where}[${i}]`, into));
    return;
  }
  if (!isObj(doc)) {
    into.errors.push(`${where}: expected an object with a kind`);
    return;
  }
  const kind = doc.kind;
  const meta = isObj(doc.metadata) ? doc.metadata : {};
  const name = str(meta.name) ?? str(doc.name) ?? "";
  const spec = isObj(doc.spec) ? doc.spec : {};
  switch (kind) {
    case "Input": {
      if (!name) into.errors.push(`${where}: Input without metadata.name`);
      const input: Input = {
        name,
        inputClass: str(spec.inputClass) ?? "subscription",
        constraints: constraintsFrom(spec.constraints, `${where}: Input ${name}`, into.errors),
      };
      addInput(into, input, where, "Input");
      return;
    }
    case "Operator": {
      if (!name) into.errors.push(`${where}: Operator without metadata.name`);
      const cs: InputConstraint[] = [];
      if (isObj(spec.catalog)) cs.push({ type: "olm.catalog", value: spec.catalog });
      const pkg = isObj(spec.catalog) ? str(spec.catalog.package) : undefined;
      if (spec.version !== undefined && spec.version !== null)
        cs.push({ type: "olm.packageVersion", value: { package: pkg ?? name, version: str(spec.version) ?? "" } });
      cs.push(...constraintsFrom(spec.constraints, `${where}: Operator ${name}`, into.errors));
      addInput(into, { name, inputClass: str(spec.inputClass) ?? "subscription", constraints: cs }, where, "Operator");
      return;
    }
    case "InputClass": {
      if (!name) into.errors.push(`${where}: InputClass without metadata.name`);
      const p = isObj(doc.parameters) ? doc.parameters : isObj(spec.parameters) ? spec.parameters : {};
      const pref = str(p.dependencyPreference);
      if (pref !== undefined && pref !== "newest" && pref !== "minimal")
        into.errors.push(
          `${where}: InputClass ${name}: dependencyPreference must be newest or minimal, got ${JSON.stringify(pref)}`,
        );
      into.classes.push({
        name,
        parameters: {
          force: bool(p.force, false),
          generateInputsForDependencies: bool(p.generateInputsForDependencies, false),
          dryRun: bool(p.dryRun, false),
          trace: bool(p.trace, false),
          dependencyPreference: pref === "minimal" ? "minimal" : "newest",
          constraints: constraintsFrom(p.constraints, `${where}: InputClass ${name}`, into.errors),
        },
      });
      return;
    }
    case "Installed":
    case "InstalledOperators": {
      const list = Array.isArray(doc.operators) ? doc.operators : Array.isArray(spec.operators) ? spec.operators : [];
      list.forEach((o, i) => {
        const op = isObj(o) ? o : {};
        const pkg = str(op.package);
        const bundle = str(op.bundle) ?? str(op.name);
        if (!pkg || !bundle) {
          into.errors.push(`${where}: operators[${i}] needs "package" and "bundle"`);
          return;
        }
        into.installed.push({
          package: pkg,
          bundle,
          version: str(op.version),
          catalog: str(op.catalog),
          channel: str(op.channel),
          subscribed: bool(op.subscribed, false),
        });
      });
      const c = isObj(doc.cluster) ? doc.cluster : isObj(spec.cluster) ? spec.cluster : undefined;
      if (c) into.cluster = { kubernetesVersion: str(c.kubernetesVersion), openshiftVersion: str(c.openshiftVersion) };
      return;
    }
    case "Cluster": {
      into.cluster = {
        kubernetesVersion: str(spec.kubernetesVersion ?? doc.kubernetesVersion),
        openshiftVersion: str(spec.openshiftVersion ?? doc.openshiftVersion),
      };
      return;
    }
    default:
      into.errors.push(
        `${where}: unknown kind ${JSON.stringify(kind ?? null)} ` +
          `(expected Input, InputClass, Operator, Installed or Cluster)`,
      );
  }
}

/**
 * Parses a YAML or JSON stream (as catalogs are read) of Input,
 * InputClass, Operator, Installed and Cluster documents.
 */
export function parseInputDocuments(text: string, file = "input", into?: InputDocuments): InputDocuments {
  const out: InputDocuments = into ?? { inputs: [], classes: [], installed: [], errors: [] };
  // the same YAML-or-JSON stream reader as catalogs (Go's YAML 1.1 semantics, go-yaml's alias limits)
  let n = 0;
  for (const item of decodeStream(text)) {
    n++;
    if (item.kind === "error") {
      out.errors.push(`${file}${item.line ? `:${item.line}` : ""}: ${item.message.split("\n")[0]}`);
      if (item.fatal) break;
      continue;
    }
    addDocument(item.value, `${file} document ${n}`, out);
  }
  return out;
}
