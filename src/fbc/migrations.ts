/**
 * The names of opm's catalog migrations and their help text: what `--migrate-level` accepts, kept
 * apart from the migrations themselves (fbc/migrate.ts) so that defining the flag loads nothing else.
 */
import { goQuote } from "../gojson/fmt.js";

/** A migration level name: one of {@link MIGRATION_LEVELS} or `all`. */
export type MigrationLevel = string;

/** opm's migrations, in the order they run (alpha/action/migrations/migrations.go). */
export const MIGRATION_LEVELS: readonly { name: string; help: string }[] = Object.freeze([
  Object.freeze({ name: "none", help: "do nothing" }),
  Object.freeze({
    name: "bundle-object-to-csv-metadata",
    help: `migrates bundles' "olm.bundle.object" to "olm.csv.metadata"`,
  }),
]);

export const ALL_MIGRATIONS = "all";

/** opm's error for a level that is neither a migration nor `all`, or undefined when valid. */
export function validateMigrationLevel(level: string): string | undefined {
  if (level === ALL_MIGRATIONS || MIGRATION_LEVELS.some((m) => m.name === level)) return undefined;
  return `unknown migration level ${goQuote(level)}`;
}

/**
 * The text opm appends to the `--migrate-level` flag description (migrations.HelpText): one line
 * per migration, aligned like Go's tabwriter (minwidth 0, padding 1, space padding).
 */
export function migrationHelpText(): string {
  let s = "\nThe migrator will run all migrations up to and including the selected level.\n\nAvailable migrators:\n";
  if (MIGRATION_LEVELS.length === 0) s += "   (no migrations available in this version)\n";
  // tabwriter measures cells in runes; every token here is ASCII.
  const cells = MIGRATION_LEVELS.map((m) => `  - ${m.name}`);
  const width = Math.max(0, ...cells.map((c) => [...c].length)) + 1;
  MIGRATION_LEVELS.forEach((m, i) => {
    s += cells[i] + " ".repeat(width - [...cells[i]].length) + `: ${m.help}\n`;
  });
  return s;
}
