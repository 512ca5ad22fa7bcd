/**
 * What an `add-bundle` template kind is ({@link AddBundleKind}, planning its edit in an
 * {@link AddBundleContext}) and the registry of kinds added by library users. The built-in kinds
 * (kinds.ts, graph.ts) and the orchestration (addbundle.ts) import this module; it imports
 * neither, so the kinds and the code that runs them form no import cycle.
 */
import type { DeclarativeConfig } from "../../fbc/types.js";
import type { BundleSource, RenderedBundle } from "../source/source.js";
import type { EditableFile, EditValue, TextEdits } from "./edit.js";

/** What happened to one template. */
export type AddBundleOutcome = "added" | "already-present" | "conflict" | "invalid-input" | "unreachable-image";

/** The outcomes that leave the template unwritten. */
export type AddBundleFailure = Exclude<AddBundleOutcome, "added" | "already-present">;

/** What to add. */
export interface AddBundleRequest {
  /** The bundle image reference, written into the template as given. */
  image: string;
  /** Channels to add the bundle to (semver templates: the archetypes Candidate, Fast, Stable, any letter case). */
  channels: string[];
  /** Edges of the new channel entry (basic templates and raw FBC; semver computes its own). */
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  /** The bundle's name, when the image cannot (or need not) be rendered. */
  name?: string;
}

/** What the edit of a kind needs from the new bundle. */
export type BundleNeed = "nothing" | "name" | "bundle";

/** The state a kind plans its edit in. */
export interface AddBundleContext {
  readonly file: EditableFile;
  readonly edits: TextEdits;
  readonly request: AddBundleRequest;
  /** The rendered bundle, when the image could be rendered. */
  readonly bundle?: RenderedBundle;
  /** The bundle's name (rendered, or the request's `name`). */
  readonly bundleName?: string;
  /** Records a change (the kind also adds the matching text edit). */
  change(path: string, value: EditValue, description: string): void;
  /** Records a failure: the template is not written. */
  fail(outcome: AddBundleFailure, code: string, message: string, hint?: string): void;
  /** Records a warning. */
  warn(code: string, message: string): void;
}

/**
 * A template kind add-bundle can edit. A new kind plugs in with {@link registerAddBundleKind}.
 */
export interface AddBundleKind {
  /** Short name shown in reports. */
  readonly name: string;
  /** Whether a file whose first document has this `schema` is of this kind. */
  matches(schema: string): boolean;
  /** What the edit needs from the bundle image for this request. */
  needs(req: AddBundleRequest): BundleNeed;
  /** Checks the text is a well-formed template of this kind; throws OpcatError (exit 1) otherwise. */
  check(text: string): void | Promise<void>;
  /** Renders the template to FBC, with `source` answering its images (errors propagate). */
  render(text: string, source: BundleSource): Promise<DeclarativeConfig>;
  /** Plans the edit: records text edits in `ctx.edits` and changes/failures through `ctx`. */
  plan(ctx: AddBundleContext): void;
}

const REGISTERED: AddBundleKind[] = [];

/**
 * Registers a template kind: it is tried before the kinds registered earlier and the built-in ones,
 * and replaces any kind of the same name.
 */
export function registerAddBundleKind(kind: AddBundleKind): void {
  const i = REGISTERED.findIndex((k) => k.name === kind.name);
  if (i >= 0) REGISTERED.splice(i, 1);
  REGISTERED.unshift(kind);
}

/** The registered kinds, latest first, then the `builtin` kinds no registered kind replaces. */
export function kindsInOrder(builtin: readonly AddBundleKind[]): readonly AddBundleKind[] {
  if (REGISTERED.length === 0) return builtin;
  return [...REGISTERED, ...builtin.filter((b) => !REGISTERED.some((k) => k.name === b.name))];
}
