/**
 * Flag values every command group checks the same way: `-o/--output` formats and `--migrate-level`.
 * An unknown value is a usage error (exit 2) whose hint names what is accepted, or the close spelling
 * that was probably meant (`-o yml` → `yaml`).
 */
import { Option } from "commander";
import { OpcatError } from "../errors/index.js";
import { ALL_MIGRATIONS, MIGRATION_LEVELS, migrationHelpText, validateMigrationLevel } from "../fbc/migrations.js";

/** Edit distance of two short strings, a swap of neighbours counting one (optimal string alignment). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => i + j));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(
        d[i - 1][j] + 1,
        d[i][j - 1] + 1,
        d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
        i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]
          ? d[i - 2][j - 2] + 1
          : Number.POSITIVE_INFINITY,
      );
    }
  return d[a.length][b.length];
}

/**
 * `did you mean "<x>"?` for the value of `valid` closest to `v` (case aside) when it is one edit away
 * (two for names of six characters or more), else undefined: `yml` → `yaml`, not `xml` → `yaml`.
 */
export function didYouMean(v: string, valid: readonly string[]): string | undefined {
  const lower = v.toLowerCase();
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const c of valid) {
    const d = distance(lower, c);
    if (d <= (c.length >= 6 ? 2 : 1) && d < bestD) [best, bestD] = [c, d];
  }
  return best === undefined ? undefined : `did you mean ${JSON.stringify(best)}?`;
}

/** USAGE_OUTPUT for `-o <v>` when `formats` are accepted: the message names them, the hint the likely one. */
export function outputFormatError(v: string, formats: readonly string[], quote = JSON.stringify): OpcatError {
  const message = `invalid --output value ${quote(v)}, expected (${formats.join("|")})`;
  const hint = didYouMean(v, formats);
  return new OpcatError("USAGE_OUTPUT", message, {
    kind: "usage",
    problems: [{ code: "USAGE_OUTPUT", message, severity: "error", ...(hint ? { hint } : {}) }],
  });
}

/** The values a flag accepts, for shell completion (commander's `choices` aside, which its help would list). */
const VALUES = new WeakMap<Option, readonly string[]>();

/** The values `option` accepts, when it names them (`-o json|yaml`, `--migrate-level`, commander choices). */
export function flagValues(option: Option): readonly string[] | undefined {
  return VALUES.get(option) ?? option.argChoices;
}

/**
 * `-o, --output <format>` accepting `formats` (default `def`; none when undefined, the command then decides),
 * described as `description` when given.
 */
export function outputOption(formats: readonly string[], def: string | undefined, description?: string): Option {
  const option = new Option("-o, --output <format>", description ?? `output format (${formats.join("|")})`).argParser(
    (v) => {
      if (!formats.includes(v)) throw outputFormatError(v, formats);
      return v;
    },
  );
  if (def !== undefined) option.default(def);
  VALUES.set(option, formats);
  return option;
}

/** `--migrate-level <level>`: an unknown level is USAGE_MIGRATE_LEVEL, opm's message, the levels as a hint. */
export function migrateLevelOption(description: string): Option {
  const levels = [...MIGRATION_LEVELS.map((m) => m.name), ALL_MIGRATIONS];
  const option = new Option("--migrate-level <level>", `${description}${migrationHelpText()}`).argParser((v) => {
    const err = validateMigrationLevel(v);
    if (err === undefined) return v;
    const near = didYouMean(v, levels);
    const hint = `${near ? `${near} ` : ""}valid levels: ${levels.join(", ")}`;
    throw new OpcatError("USAGE_MIGRATE_LEVEL", err, {
      kind: "usage",
      problems: [{ code: "USAGE_MIGRATE_LEVEL", message: err, severity: "error", hint }],
    });
  });
  VALUES.set(option, levels);
  return option;
}
