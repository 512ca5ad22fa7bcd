/** Image references: the grammar lives in the leaf src/reference (so that src/fbc need not import src/image). */
export * from "../reference/reference.js";
