/**
 * Unpacking a Bundle's refs into local, content-addressed storage (no Pod needed: opcat pulls images
 * itself): `docker://` images through opcat's registry client (pull secrets, registries.conf mirrors,
 * digest verification, the blob cache), `file://` paths from ConfigMaps mounted by `volumeMounts`,
 * `https://` gzipped tarballs checked against `spec.digest`. The result is a directory
 * `<root>/sha256-<digest of the tree>` holding the bundle's files, plus its format and objects.
 *
 * Content is read as its requester: a ConfigMap or pull Secret is read only after a
 * SubjectAccessReview says the requester may `get` it, and a refusal does not tell whether it exists.
 * Work is bounded ({@link ContentLimits}): downloads are streamed to disk under a cap, expansion
 * has a byte and an entry cap, each pull has a time limit, and no symlink may leave the tree.
 *
 * The parts: ./content/types.ts (results, errors, limits), store.ts (checked trees, digests, the
 * store), sources.ts (fetching refs as the requester), inspect.ts (format and objects).
 */
export * from "./content/types.js";
export { contentExists, scanTree, treeDigest, type TreeEntry } from "./content/store.js";
export { unpackBundle } from "./content/sources.js";
export { inspect, readPlainObjects } from "./content/inspect.js";
