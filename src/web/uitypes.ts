/**
 * The JSON shapes of the web UI's API (`/ui/api/...`, see uiapi.ts). Types only: shared by the
 * server and the browser code in src/ui (which imports nothing else from the server).
 */

/** GET /ui/api/status: the server process's memory now, in bytes. */
export interface UiStatus {
  memory: { rss: number; heapUsed: number; heapTotal: number; external: number };
}

/** GET /ui/api/catalogs */
export interface UiCatalogSummary {
  name: string;
  /** Revision number of the content served (increases on reloads). */
  revision: number;
  digest: string;
  lastModified: string;
  packages: number;
  channels: number;
  bundles: number;
  /** Whether the catalog has valid content (false: configured but failed to load). */
  ready: boolean;
  /** The revision the served one replaced, when the server keeps it (see /changes); 0 when none. */
  previousRevision: number;
}

/** GET /ui/api/catalogs/<name>/changes: what the last reload changed, package by package. */
export interface UiCatalogChanges {
  catalog: string;
  from: { revision: number; digest: string; lastModified: string };
  to: { revision: number; digest: string; lastModified: string };
  /** Packages whose blobs differ, by name. */
  packages: UiPackageChange[];
}

export interface UiPackageChange extends UiGraphDiff {
  status: "added" | "removed" | "changed";
}

/** One row of GET /ui/api/catalogs/<name>/packages */
export interface UiPackageSummary {
  name: string;
  displayName: string;
  defaultChannel: string;
  channels: string[];
  bundles: number;
  /** Version of the default channel's head (empty when unknown). */
  headVersion: string;
  provider: string;
  keywords: string[];
  /** Provided APIs as `Kind.version.group` (owned CRDs and APIs of every bundle), sorted. */
  providedApis: string[];
  hasIcon: boolean;
  deprecated: boolean;
  /** A one-line summary (the CSV's `description` annotation), may be empty. */
  summary: string;
}

/**
 * GET /ui/api/catalogs/<name>/packages[?q=&in=&offset=&limit=]: the packages matching the search (all
 * without `q`), from `offset`, at most `limit` of them (all without `limit`), in name order.
 */
export interface UiPackageList {
  catalog: string;
  revision: number;
  /** Packages in the catalog. */
  total: number;
  /** Packages matching the search (all of them without `q`). */
  matched: number;
  /** Bundles of the matching packages. */
  bundles: number;
  /** Index of `packages[0]` among the matching packages. */
  offset: number;
  packages: UiPackageSummary[];
}

/** Where the package search looks: everywhere (name, display name, keyword, provided API, provider) or one field. */
export type UiPackageSearchField = "all" | "name" | "keyword" | "api";

/** A catalog blob as served (keys sorted, like `/api/v1/metas`). */
export type UiBlob = { [key: string]: unknown };

/** GET /ui/api/catalogs/<name>/packages/<package>: every blob of the package. */
export interface UiPackageDetail {
  catalog: string;
  revision: number;
  package: UiBlob;
  channels: UiBlob[];
  bundles: UiBlob[];
  deprecations: UiBlob | null;
  /** Blobs of other schemas that belong to the package. */
  others: UiBlob[];
}

/** The error body of every /ui/api answer that is not 2xx (the resolver API's shape). */
export interface UiErrorBody {
  error: { code: string; message: string; problems?: { code: string; message: string }[] };
}

/** POST /ui/api/render-template request. */
export interface UiRenderRequest {
  /** The template (YAML or JSON), basic, semver or graph. */
  template: string;
  /** Catalog used as the --reuse source for bundles (default: the only/first catalog). */
  catalog?: string;
}

/** POST /ui/api/render-template answer. */
export interface UiRenderAnswer {
  /** The rendered catalog's blobs, in opm's order. */
  blobs: UiBlob[];
  /** Mermaid text of the rendered catalog (opm's render-graph). */
  mermaid: string;
  warnings: string[];
  /** Per rendered package: what it changes against the served catalog's package of that name. */
  diff: UiGraphDiff[];
}

/** Bundles and upgrade edges (`from → to (kind)`) added or removed. */
export interface UiGraphDiff {
  package: string;
  /** Whether the served catalog has the package. */
  existing: boolean;
  addedBundles: string[];
  removedBundles: string[];
  addedEdges: string[];
  removedEdges: string[];
}

/** A bundle in GET /ui/api/catalogs/<c>/packages/<p>/graph */
export interface UiGraphNode {
  name: string;
  /** The bundle's olm.package version (empty for a name that is only referenced). */
  version: string;
  /** Channels that list the bundle. */
  channels: string[];
  /** Channels whose head the bundle is. */
  heads: string[];
  deprecated: boolean;
  /** False for a name an entry replaces or skips that is not a bundle of the catalog. */
  inCatalog: boolean;
  /** With compare=previous: whether the last reload added or removed it. */
  change?: "added" | "removed";
}

/** An upgrade edge: `from` may upgrade to `to`. */
export interface UiGraphEdge {
  from: string;
  to: string;
  kind: "replaces" | "skips" | "skipRange";
  channels: string[];
  /** The skipRange, for skipRange edges. */
  label?: string;
  /** With compare=previous: whether the last reload added or removed it. */
  change?: "added" | "removed";
}

export interface UiGraph {
  package: string;
  defaultChannel: string;
  /** The channel drawn, or empty for all. */
  channel: string;
  /** Every channel of the package, sorted. */
  channels: string[];
  deprecatedPackage: boolean;
  deprecatedChannels: string[];
  nodes: UiGraphNode[];
  edges: UiGraphEdge[];
  warnings: string[];
  /** With compare=previous: the revisions compared (the graph is their union, changes marked). */
  compared?: { from: number; to: number };
  /** Positions and edge paths (with ?layout=1): the edges of the kinds not hidden (?hide=skipRange,…). */
  layout?: UiGraphLayout;
}

/** A laid-out graph: boxes by bundle name, SVG paths of the drawn edges (index into UiGraph.edges). */
export interface UiGraphLayout {
  width: number;
  height: number;
  nodes: Record<string, { x: number; y: number; w: number; h: number }>;
  edges: { index: number; d: string }[];
}

/** GET /ui/api/cluster (with `opcat serve --kubeconfig`). */
export interface UiClusterInfo {
  server: string;
  /** The user the server reads the cluster as (approvals never use it). */
  readsAs: string;
}

export interface UiCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** One row of GET /ui/api/cluster/operators */
export interface UiOperator {
  name: string;
  package: string;
  channel: string;
  installedBundle: string;
  installedVersion: string;
  conditions: UiCondition[];
  updates: {
    options: string[];
    package: string;
    channel: string;
    catalogSourceRef: { name: string; namespace?: string };
  }[];
  components: { kind: string; name: string; namespace: string; ready: string }[];
}

/** One row of GET /ui/api/cluster/instances */
export interface UiInstance {
  name: string;
  bundle: string;
  class: string;
  activeBundle: string;
  generation: number;
  /** The Approved condition is AwaitingApproval for the current generation. */
  awaitingApproval: boolean;
  conditions: UiCondition[];
}

/** GET /ui/api/cluster/instances/<name>: what approving would let it do. */
export interface UiInstanceDetail extends UiInstance {
  /** A resolveset Instance: the permissions its bundles add to what is installed. */
  newPermissions?: string[];
  /** The objects the bundle becomes, and the RBAC rules they grant. */
  objects: { kind: string; name: string; namespace: string }[];
  grants: string[];
  previewError?: string;
}
