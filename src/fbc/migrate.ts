/**
 * opm's catalog migrations (operator-registry alpha/action/migrations): `--migrate-level`.
 *
 * The only real migration, `bundle-object-to-csv-metadata`, replaces a bundle's `olm.bundle.object`
 * properties with one `olm.csv.metadata` property condensed from its ClusterServiceVersion. opm
 * builds that value by decoding the CSV JSON into the typed Go struct
 * (`json.Unmarshal` into operator-framework/api `v1alpha1.ClusterServiceVersion`) and encoding
 * `property.CSVMetadata` (compact, HTML escaping off). Both halves are ported here: a decoder that
 * follows Go's `encoding/json` rules over a description of the Go types (field order, case-folded
 * key matching, `null` handling, decoding into existing values on duplicate keys, type errors with
 * Go's messages, custom unmarshalers of semver versions, times and int-or-strings) and an encoder
 * that writes the fields in Go struct order with Go's `omitempty` rules.
 */
import { compareUtf8, quoteGoString } from "../gojson/encode.js";
import { findJsonValueEnd } from "../gojson/scan.js";
import { SemverError, tryParsePRVersion, tryParseTolerant } from "../semver/index.js";
import { OpcatError } from "../errors/index.js";
import { bundleCsvJson, invalidateBundleObjects } from "./objects.js";
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_CSV_METADATA } from "./properties.js";
import { MIGRATION_LEVELS, validateMigrationLevel, type MigrationLevel } from "./migrations.js";
import { RawJson } from "./rawjson.js";
import type { Bundle, DeclarativeConfig } from "./types.js";
import {
  GO_BOOL,
  GO_INT32,
  GO_INT64,
  GO_RAW,
  GO_STRING,
  GO_STRING_MAP,
  GO_STRINGS,
  goMap,
  goPtr,
  goSlice,
  goSliceItems,
  goString,
  goStruct,
  goUnmarshal,
  type GoType,
} from "../gojson/structdecode.js";

export { MIGRATION_LEVELS, migrationHelpText, validateMigrationLevel, type MigrationLevel } from "./migrations.js";

/**
 * Runs, in place, every migration up to and including `level` (`all` runs every one).
 * Throws an {@link OpcatError} with opm's text: `unknown migration level "x"` (code
 * `MIGRATE_LEVEL`, exit 2) for a bad level, `migrate: <error>` (code `MIGRATE`, exit 1) when a
 * bundle's CSV cannot be decoded.
 */
export function migrate(cfg: DeclarativeConfig, level: MigrationLevel): void {
  const bad = validateMigrationLevel(level);
  if (bad !== undefined) throw new OpcatError("MIGRATE_LEVEL", bad, { kind: "usage" });
  for (const m of MIGRATION_LEVELS) {
    const err = MIGRATIONS[m.name](cfg);
    if (err !== undefined) throw new OpcatError("MIGRATE", `migrate: ${err}`, { kind: "invalid" });
    if (m.name === level) break;
  }
}

const MIGRATIONS: Record<string, (cfg: DeclarativeConfig) => string | undefined> = {
  none: () => undefined,
  "bundle-object-to-csv-metadata": bundleObjectToCsvMetadata,
};

function bundleObjectToCsvMetadata(cfg: DeclarativeConfig): string | undefined {
  for (const b of cfg.bundles) {
    const err = convertBundle(b);
    if (err !== undefined) return err;
  }
  return undefined;
}

function convertBundle(b: Bundle): string | undefined {
  if (b.image === "") return undefined;
  const csvJson = bundleCsvJson(b);
  if (csvJson === "") return undefined;
  const decoded = decodeCsv(csvJson);
  if (typeof decoded === "string") return decoded;
  // Go filters b.Properties in place (`props := b.Properties[:0]`) and returns early, without
  // reassigning b.Properties, when it meets an olm.csv.metadata: the kept properties written so far
  // stay shifted in the shared backing array. Writing into the same array reproduces that.
  const props = b.properties;
  let w = 0;
  for (let i = 0; i < props.length; i++) {
    const p = props[i];
    if (p.type === PROPERTY_BUNDLE_OBJECT) continue;
    if (p.type === PROPERTY_CSV_METADATA) return undefined;
    props[w++] = p;
  }
  props.length = w;
  props.push({ type: PROPERTY_CSV_METADATA, value: RawJson.fromText(encodeCsvMetadata(decoded)) });
  invalidateBundleObjects(b);
  return undefined;
}

/**
 * The compact JSON text of the `olm.csv.metadata` value opm builds from a CSV's JSON text
 * (property.MustBuildCSVMetadata after json.Unmarshal into v1alpha1.ClusterServiceVersion).
 * Throws an Error carrying Go's message when Go's decoding fails.
 */
export function csvMetadataFromCsv(csvJson: string): string {
  const decoded = decodeCsv(csvJson);
  if (typeof decoded === "string") throw new Error(decoded);
  return encodeCsvMetadata(decoded);
}

// ---------------------------------------------------------------------------------------------
// Go types (the subset of operator-framework/api v1alpha1 and k8s.io types a CSV decodes into)

const STR = GO_STRING;
const BOOL = GO_BOOL;
const INT32 = GO_INT32;
const INT64 = GO_INT64;
const RAW = GO_RAW;
const STRINGS = GO_STRINGS;
const STRMAP = GO_STRING_MAP;
const str = goString;
const slice = goSlice;
const ptr = goPtr;
const mapOf = goMap;
const struct = goStruct;

// metav1.Time: null leaves it zero; otherwise a JSON string parsed with time.Parse(time.RFC3339, s).
const TIME: GoType = {
  kind: "custom",
  goName: "v1.Time",
  unmarshal: (raw, d) => {
    if (raw === "null") return;
    const s = d.unmarshalString(raw);
    const err = parseRfc3339Error(s);
    if (err !== undefined) d.abort(err);
  },
};
// metav1.FieldsV1 keeps any raw JSON.
const FIELDS_V1: GoType = { kind: "custom", goName: "v1.FieldsV1" };
// intstr.IntOrString: a string when the raw value starts with `"`, else an int32.
const INT_OR_STRING: GoType = {
  kind: "custom",
  goName: "intstr.IntOrString",
  unmarshal: (raw, d) => {
    if (raw.charCodeAt(0) === 0x22) return;
    d.unmarshalInner(raw, INT32);
  },
};
// version.OperatorVersion: a JSON string (null → "") parsed with semver.ParseTolerant.
const OPERATOR_VERSION: GoType = {
  kind: "custom",
  goName: "version.OperatorVersion",
  unmarshal: (raw, d) => {
    const v = tryParseTolerant(d.unmarshalString(raw));
    if (v instanceof SemverError) d.abort(v.message);
  },
};
// release.OperatorRelease: a JSON string (null → ""), each dot-separated part a semver pre-release identifier.
const OPERATOR_RELEASE: GoType = {
  kind: "custom",
  goName: "release.OperatorRelease",
  unmarshal: (raw, d) => {
    for (const part of d.unmarshalString(raw).split(".")) {
      const r = tryParsePRVersion(part);
      if (r instanceof SemverError) d.abort(r.message);
    }
  },
};

const LABEL_SELECTOR = struct("v1.LabelSelector", [
  ["matchLabels", STRMAP],
  [
    "matchExpressions",
    slice(
      struct("v1.LabelSelectorRequirement", [
        ["key", STR],
        ["operator", str("v1.LabelSelectorOperator")],
        ["values", STRINGS],
      ]),
    ),
  ],
]);

const OBJECT_META = struct("v1.ObjectMeta", [
  ["name", STR],
  ["generateName", STR],
  ["namespace", STR],
  ["selfLink", STR],
  ["uid", str("types.UID")],
  ["resourceVersion", STR],
  ["generation", INT64],
  ["creationTimestamp", TIME],
  ["deletionTimestamp", ptr(TIME)],
  ["deletionGracePeriodSeconds", ptr(INT64)],
  ["labels", STRMAP],
  ["annotations", STRMAP],
  [
    "ownerReferences",
    slice(
      struct("v1.OwnerReference", [
        ["apiVersion", STR],
        ["kind", STR],
        ["name", STR],
        ["uid", str("types.UID")],
        ["controller", ptr(BOOL)],
        ["blockOwnerDeletion", ptr(BOOL)],
      ]),
    ),
  ],
  ["finalizers", STRINGS],
  [
    "managedFields",
    slice(
      struct("v1.ManagedFieldsEntry", [
        ["manager", STR],
        ["operation", str("v1.ManagedFieldsOperationType")],
        ["apiVersion", STR],
        ["time", ptr(TIME)],
        ["fieldsType", STR],
        ["fieldsV1", ptr(FIELDS_V1)],
        ["subresource", STR],
      ]),
    ),
  ],
]);

const descriptor = (t: string): GoType =>
  struct(t, [
    ["path", STR],
    ["displayName", STR],
    ["description", STR],
    ["x-descriptors", STRINGS],
    ["value", RAW],
  ]);
const STATUS_DESCRIPTORS = slice(descriptor("v1alpha1.StatusDescriptor"));
const SPEC_DESCRIPTORS = slice(descriptor("v1alpha1.SpecDescriptor"));
const ACTION_DESCRIPTORS = slice(descriptor("v1alpha1.ActionDescriptor"));
const RESOURCES = slice(
  struct("v1alpha1.APIResourceReference", [
    ["name", STR],
    ["kind", STR],
    ["version", STR],
  ]),
);

const CRD_DESCRIPTION = struct("v1alpha1.CRDDescription", [
  ["name", STR],
  ["version", STR],
  ["kind", STR],
  ["displayName", STR],
  ["description", STR],
  ["resources", RESOURCES],
  ["statusDescriptors", STATUS_DESCRIPTORS],
  ["specDescriptors", SPEC_DESCRIPTORS],
  ["actionDescriptors", ACTION_DESCRIPTORS],
]);

const API_SERVICE_DESCRIPTION = struct("v1alpha1.APIServiceDescription", [
  ["name", STR],
  ["group", STR],
  ["version", STR],
  ["kind", STR],
  ["deploymentName", STR],
  ["containerPort", INT32],
  ["displayName", STR],
  ["description", STR],
  ["resources", RESOURCES],
  ["statusDescriptors", STATUS_DESCRIPTORS],
  ["specDescriptors", SPEC_DESCRIPTORS],
  ["actionDescriptors", ACTION_DESCRIPTORS],
]);

const PERMISSIONS = slice(
  struct("v1alpha1.StrategyDeploymentPermissions", [
    ["serviceAccountName", STR],
    [
      "rules",
      slice(
        struct("v1.PolicyRule", [
          ["verbs", STRINGS],
          ["apiGroups", STRINGS],
          ["resources", STRINGS],
          ["resourceNames", STRINGS],
          ["nonResourceURLs", STRINGS],
        ]),
      ),
    ],
  ]),
);

// appsv1.DeploymentSpec; the pod template's PodSpec is only checked to be an object (see report).
const DEPLOYMENT_SPEC = struct("v1.DeploymentSpec", [
  ["replicas", ptr(INT32)],
  ["selector", ptr(LABEL_SELECTOR)],
  [
    "template",
    struct("v1.PodTemplateSpec", [
      ["metadata", OBJECT_META],
      ["spec", { kind: "opaque", goName: "v1.PodSpec" }],
    ]),
  ],
  [
    "strategy",
    struct("v1.DeploymentStrategy", [
      ["type", str("v1.DeploymentStrategyType")],
      [
        "rollingUpdate",
        ptr(
          struct("v1.RollingUpdateDeployment", [
            ["maxUnavailable", ptr(INT_OR_STRING)],
            ["maxSurge", ptr(INT_OR_STRING)],
          ]),
        ),
      ],
    ]),
  ],
  ["minReadySeconds", INT32],
  ["revisionHistoryLimit", ptr(INT32)],
  ["paused", BOOL],
  ["progressDeadlineSeconds", ptr(INT32)],
]);

const INSTALL_STRATEGY = struct("v1alpha1.NamedInstallStrategy", [
  ["strategy", STR],
  [
    "spec",
    struct("v1alpha1.StrategyDetailsDeployment", [
      [
        "deployments",
        slice(
          struct("v1alpha1.StrategyDeploymentSpec", [
            ["name", STR],
            ["spec", DEPLOYMENT_SPEC],
            ["label", mapOf(STR, "labels.Set")],
          ]),
        ),
      ],
      ["permissions", PERMISSIONS],
      ["clusterPermissions", PERMISSIONS],
    ]),
  ],
]);

const WEBHOOK_DESCRIPTION = struct("v1alpha1.WebhookDescription", [
  ["generateName", STR],
  ["type", str("v1alpha1.WebhookAdmissionType")],
  ["deploymentName", STR],
  ["containerPort", INT32],
  ["targetPort", ptr(INT_OR_STRING)],
  [
    "rules",
    slice(
      struct("v1.RuleWithOperations", [
        ["operations", slice(str("v1.OperationType"))],
        ["apiGroups", STRINGS, "Rule"],
        ["apiVersions", STRINGS, "Rule"],
        ["resources", STRINGS, "Rule"],
        ["scope", ptr(str("v1.ScopeType")), "Rule"],
      ]),
    ),
  ],
  ["failurePolicy", ptr(str("v1.FailurePolicyType"))],
  ["matchPolicy", ptr(str("v1.MatchPolicyType"))],
  ["objectSelector", ptr(LABEL_SELECTOR)],
  ["sideEffects", ptr(str("v1.SideEffectClass"))],
  ["timeoutSeconds", ptr(INT32)],
  ["admissionReviewVersions", STRINGS],
  ["reinvocationPolicy", ptr(str("v1.ReinvocationPolicyType"))],
  ["webhookPath", ptr(STR)],
  ["conversionCRDs", STRINGS],
]);

const APP_LINK = struct("v1alpha1.AppLink", [
  ["name", STR],
  ["url", STR],
]);

const CSV_SPEC = struct("v1alpha1.ClusterServiceVersionSpec", [
  ["install", INSTALL_STRATEGY],
  ["version", OPERATOR_VERSION],
  ["release", OPERATOR_RELEASE],
  ["maturity", STR],
  [
    "customresourcedefinitions",
    struct("v1alpha1.CustomResourceDefinitions", [
      ["owned", slice(CRD_DESCRIPTION)],
      ["required", slice(CRD_DESCRIPTION)],
    ]),
  ],
  [
    "apiservicedefinitions",
    struct("v1alpha1.APIServiceDefinitions", [
      ["owned", slice(API_SERVICE_DESCRIPTION)],
      ["required", slice(API_SERVICE_DESCRIPTION)],
    ]),
  ],
  ["webhookdefinitions", slice(WEBHOOK_DESCRIPTION)],
  [
    "nativeAPIs",
    slice(
      struct("v1.GroupVersionKind", [
        ["group", STR],
        ["version", STR],
        ["kind", STR],
      ]),
    ),
  ],
  ["minKubeVersion", STR],
  ["displayName", STR],
  ["description", STR],
  ["keywords", STRINGS],
  [
    "maintainers",
    slice(
      struct("v1alpha1.Maintainer", [
        ["name", STR],
        ["email", STR],
      ]),
    ),
  ],
  ["provider", APP_LINK],
  ["links", slice(APP_LINK)],
  [
    "icon",
    slice(
      struct("v1alpha1.Icon", [
        ["base64data", STR],
        ["mediatype", STR],
      ]),
    ),
  ],
  [
    "installModes",
    slice(
      struct("v1alpha1.InstallMode", [
        ["type", str("v1alpha1.InstallModeType")],
        ["supported", BOOL],
      ]),
    ),
  ],
  ["replaces", STR],
  ["labels", STRMAP],
  ["annotations", STRMAP],
  ["selector", ptr(LABEL_SELECTOR)],
  ["cleanup", struct("v1alpha1.CleanupSpec", [["enabled", BOOL]])],
  ["skips", STRINGS],
  [
    "relatedImages",
    slice(
      struct("v1alpha1.RelatedImage", [
        ["name", STR],
        ["image", STR],
      ]),
    ),
  ],
]);

const CONDITION_FIELDS: [string, GoType][] = [
  ["phase", str("v1alpha1.ClusterServiceVersionPhase")],
  ["message", STR],
  ["reason", str("v1alpha1.ConditionReason")],
  ["lastUpdateTime", ptr(TIME)],
  ["lastTransitionTime", ptr(TIME)],
];

const CSV_STATUS = struct("v1alpha1.ClusterServiceVersionStatus", [
  ...CONDITION_FIELDS,
  ["conditions", slice(struct("v1alpha1.ClusterServiceVersionCondition", CONDITION_FIELDS))],
  [
    "requirementStatus",
    slice(
      struct("v1alpha1.RequirementStatus", [
        ["group", STR],
        ["version", STR],
        ["kind", STR],
        ["name", STR],
        ["status", str("v1alpha1.StatusReason")],
        ["message", STR],
        ["uuid", STR],
        [
          "dependents",
          slice(
            struct("v1alpha1.DependentStatus", [
              ["group", STR],
              ["version", STR],
              ["kind", STR],
              ["status", str("v1alpha1.StatusReason")],
              ["uuid", STR],
              ["message", STR],
            ]),
          ),
        ],
      ]),
    ),
  ],
  ["certsLastUpdated", ptr(TIME)],
  ["certsRotateAt", ptr(TIME)],
  [
    "cleanup",
    struct("v1alpha1.CleanupStatus", [
      [
        "pendingDeletion",
        slice(
          struct("v1alpha1.ResourceList", [
            ["group", STR],
            ["kind", STR],
            [
              "instances",
              slice(
                struct("v1alpha1.ResourceInstance", [
                  ["name", STR],
                  ["namespace", STR],
                ]),
              ),
            ],
          ]),
        ),
      ],
    ]),
  ],
]);

/** The subset of operator-framework/api v1alpha1.ClusterServiceVersion a CSV decodes into. */
export const GO_CLUSTER_SERVICE_VERSION = struct("v1alpha1.ClusterServiceVersion", [
  ["kind", STR, "TypeMeta"],
  ["apiVersion", STR, "TypeMeta"],
  ["metadata", OBJECT_META],
  ["spec", CSV_SPEC],
  ["status", CSV_STATUS],
]);

// ---------------------------------------------------------------------------------------------
// Decoded Go values (see goUnmarshal). The zero value of every type is `undefined`.

type GoStruct = Record<string, unknown>;
type GoMap = Map<string, unknown>;

/** Decodes a CSV like `json.Unmarshal(csvJSON, &v1alpha1.ClusterServiceVersion{})`: the value or Go's error text. */
function decodeCsv(text: string): GoStruct | string {
  const r = goUnmarshal(text, GO_CLUSTER_SERVICE_VERSION);
  if (!r.ok) return r.error;
  return (r.value as GoStruct | undefined) ?? {};
}

// ---------------------------------------------------------------------------------------------
// Encoding property.CSVMetadata (Go struct order, omitempty, maps sorted, no HTML escaping)

function field(o: unknown, name: string): unknown {
  return o === undefined ? undefined : (o as GoStruct)[name];
}

function strOf(v: unknown): string {
  return (v as string | undefined) ?? "";
}

const items = goSliceItems;

class ObjectWriter {
  s = "{";
  any = false;
  key(name: string): void {
    this.s += (this.any ? ',"' : '"') + name + '":';
    this.any = true;
  }
  str(name: string, v: unknown, omitEmpty: boolean): void {
    const s = strOf(v);
    if (omitEmpty && s === "") return;
    this.key(name);
    this.s += quoteGoString(s);
  }
  raw(name: string, text: string): void {
    this.key(name);
    this.s += text;
  }
  list(name: string, v: unknown, enc: (x: unknown) => string): void {
    const xs = items(v);
    if (xs.length === 0) return;
    this.key(name);
    this.s += "[" + xs.map(enc).join(",") + "]";
  }
  strMap(name: string, v: unknown): void {
    const m = v as GoMap | undefined;
    if (m === undefined || m.size === 0) return;
    this.key(name);
    const keys = [...m.keys()].sort(compareUtf8);
    this.s += "{" + keys.map((k) => quoteGoString(k) + ":" + quoteGoString(strOf(m.get(k)))).join(",") + "}";
  }
  end(): string {
    return this.s + "}";
  }
}

const encStr = (v: unknown): string => quoteGoString(strOf(v));

function encDescriptor(d: unknown): string {
  const w = new ObjectWriter();
  w.str("path", field(d, "path"), false);
  w.str("displayName", field(d, "displayName"), true);
  w.str("description", field(d, "description"), true);
  w.list("x-descriptors", field(d, "x-descriptors"), encStr);
  const value = field(d, "value") as string | undefined;
  if (value !== undefined && value !== "") w.raw("value", compactJson(value));
  return w.end();
}

function encResource(r: unknown): string {
  const w = new ObjectWriter();
  w.str("name", field(r, "name"), false);
  w.str("kind", field(r, "kind"), false);
  w.str("version", field(r, "version"), false);
  return w.end();
}

function encDescriptorLists(w: ObjectWriter, o: unknown): void {
  w.list("resources", field(o, "resources"), encResource);
  w.list("statusDescriptors", field(o, "statusDescriptors"), encDescriptor);
  w.list("specDescriptors", field(o, "specDescriptors"), encDescriptor);
  w.list("actionDescriptors", field(o, "actionDescriptors"), encDescriptor);
}

function encCrdDescription(c: unknown): string {
  const w = new ObjectWriter();
  w.str("name", field(c, "name"), false);
  w.str("version", field(c, "version"), false);
  w.str("kind", field(c, "kind"), false);
  w.str("displayName", field(c, "displayName"), true);
  w.str("description", field(c, "description"), true);
  encDescriptorLists(w, c);
  return w.end();
}

function encApiServiceDescription(a: unknown): string {
  const w = new ObjectWriter();
  w.str("name", field(a, "name"), false);
  w.str("group", field(a, "group"), false);
  w.str("version", field(a, "version"), false);
  w.str("kind", field(a, "kind"), false);
  w.str("deploymentName", field(a, "deploymentName"), true);
  const port = (field(a, "containerPort") as number | undefined) ?? 0;
  if (port !== 0) w.raw("containerPort", String(port));
  w.str("displayName", field(a, "displayName"), true);
  w.str("description", field(a, "description"), true);
  encDescriptorLists(w, a);
  return w.end();
}

function encOwnedRequired(o: unknown, enc: (x: unknown) => string): string {
  const w = new ObjectWriter();
  w.list("owned", field(o, "owned"), enc);
  w.list("required", field(o, "required"), enc);
  return w.end();
}

function encNamed(o: unknown, second: string): string {
  const w = new ObjectWriter();
  w.str("name", field(o, "name"), true);
  w.str(second, field(o, second), true);
  return w.end();
}

function encInstallMode(m: unknown): string {
  const w = new ObjectWriter();
  w.str("type", field(m, "type"), false);
  w.raw("supported", field(m, "supported") === true ? "true" : "false");
  return w.end();
}

function encGvk(g: unknown): string {
  const w = new ObjectWriter();
  w.str("group", field(g, "group"), false);
  w.str("version", field(g, "version"), false);
  w.str("kind", field(g, "kind"), false);
  return w.end();
}

function encodeCsvMetadata(csv: GoStruct): string {
  const meta = csv.metadata;
  const spec = csv.spec;
  const w = new ObjectWriter();
  w.strMap("annotations", field(meta, "annotations"));
  w.raw("apiServiceDefinitions", encOwnedRequired(field(spec, "apiservicedefinitions"), encApiServiceDescription));
  w.raw("crdDescriptions", encOwnedRequired(field(spec, "customresourcedefinitions"), encCrdDescription));
  w.str("description", field(spec, "description"), true);
  w.str("displayName", field(spec, "displayName"), true);
  w.list("installModes", field(spec, "installModes"), encInstallMode);
  w.list("keywords", field(spec, "keywords"), encStr);
  w.strMap("labels", field(meta, "labels"));
  w.list("links", field(spec, "links"), (l) => encNamed(l, "url"));
  w.list("maintainers", field(spec, "maintainers"), (m) => encNamed(m, "email"));
  w.str("maturity", field(spec, "maturity"), true);
  w.str("minKubeVersion", field(spec, "minKubeVersion"), true);
  w.list("nativeAPIs", field(spec, "nativeAPIs"), encGvk);
  w.raw("provider", encNamed(field(spec, "provider"), "url"));
  return w.end();
}

/** Go's json.Compact without HTML escaping: drops insignificant whitespace, keeps everything else. */
function compactJson(raw: string): string {
  if (!/[ \t\r\n]/.test(raw)) return raw;
  let out = "";
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x22) {
      i = findJsonValueEnd(raw, i) - 1;
    } else if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
      out += raw.slice(start, i);
      start = i + 1;
    }
  }
  return out + raw.slice(start);
}

// ---------------------------------------------------------------------------------------------
// time.Parse(time.RFC3339, s) errors (Go's general layout parser; the RFC 3339 fast path accepts a
// subset of what it accepts, so it decides success and failure alone).

const RFC3339 = "2006-01-02T15:04:05Z07:00";

/** Go's time.Parse(time.RFC3339, s) error text, or undefined when `s` parses. */
function parseRfc3339Error(input: string): string | undefined {
  // Go indexes strings by byte: work on the UTF-8 bytes, one char per byte.
  const avalue = Buffer.from(input, "utf8").toString("latin1");
  let value = avalue;
  const cannot = (valueElem: string, layoutElem: string): string =>
    `parsing time ${timeQuote(avalue)} as ${timeQuote(RFC3339)}: ` +
    `cannot parse ${timeQuote(valueElem)} as ${timeQuote(layoutElem)}`;
  const message = (m: string): string => `parsing time ${timeQuote(avalue)}${m}`;
  const isDigit = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 0x30 && s.charCodeAt(i) <= 0x39;
  // getnum: one or two digits (fixed: exactly two).
  const getnum = (s: string, fixed: boolean): [number, string] | undefined => {
    if (!isDigit(s, 0)) return undefined;
    if (!isDigit(s, 1)) return fixed ? undefined : [s.charCodeAt(0) - 0x30, s.slice(1)];
    return [(s.charCodeAt(0) - 0x30) * 10 + s.charCodeAt(1) - 0x30, s.slice(2)];
  };
  const chunks: [string, string][] = [
    ["", "2006"],
    ["-", "01"],
    ["-", "02"],
    ["T", "15"],
    [":", "04"],
    [":", "05"],
    ["", "Z07:00"],
  ];
  let year = 0;
  let month = 0;
  let day = 0;
  for (const [prefix, std] of chunks) {
    if (!value.startsWith(prefix)) {
      // skip() stops at the first differing byte; the prefixes are single bytes here.
      return cannot(value, prefix);
    }
    value = value.slice(prefix.length);
    const hold = value;
    let bad = false;
    let range = "";
    switch (std) {
      case "2006":
        if (value.length < 4 || !isDigit(value, 0) || !/^\d{4}$/.test(value.slice(0, 4))) bad = true;
        else {
          year = Number(value.slice(0, 4));
          value = value.slice(4);
        }
        break;
      case "01":
      case "02":
      case "15":
      case "04":
      case "05": {
        const r = getnum(value, std !== "15");
        if (r === undefined) {
          bad = true;
          break;
        }
        const [n, rest] = r;
        value = rest;
        if (std === "01") {
          month = n;
          if (n <= 0 || n > 12) range = "month";
        } else if (std === "02") day = n;
        else if (std === "15") {
          if (n >= 24) range = "hour";
        } else if (std === "04") {
          if (n >= 60) range = "minute";
        } else if (n >= 60) range = "second";
        else if (value.length >= 2 && (value[0] === "." || value[0] === ",") && isDigit(value, 1)) {
          let k = 2;
          while (k < value.length && isDigit(value, k)) k++;
          value = value.slice(k);
        }
        break;
      }
      default: {
        // Z07:00
        if (value.length >= 1 && value[0] === "Z") {
          value = value.slice(1);
          break;
        }
        if (value.length < 6 || value[3] !== ":") {
          bad = true;
          break;
        }
        const sign = value[0];
        const hh = getnum(value.slice(1, 3), true);
        const mm = hh === undefined ? undefined : getnum(value.slice(4, 6), true);
        value = value.slice(6);
        if (hh === undefined || mm === undefined) bad = true;
        const hr = hh?.[0] ?? 0;
        const mn = mm?.[0] ?? 0;
        if (hr > 24) range = "time zone offset hour";
        if (mn > 60) range = "time zone offset minute";
        if (!bad && sign !== "+" && sign !== "-") bad = true;
        break;
      }
    }
    if (range !== "") return message(`: ${range} out of range`);
    if (bad) return cannot(hold, std);
  }
  if (value.length !== 0) return message(`: extra text: ${timeQuote(value)}`);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 ? (leap ? 29 : 28) : [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (day < 1 || day > days) return message(": day out of range");
  return undefined;
}

/** Go time's quote(): bytes outside printable ASCII as \xNN (input is one char per byte). */
function timeQuote(bytes: string): string {
  let s = '"';
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes.charCodeAt(i);
    if (c >= 0x80 || c < 0x20) s += "\\x" + c.toString(16).padStart(2, "0");
    else s += c === 0x22 || c === 0x5c ? "\\" + bytes[i] : bytes[i];
  }
  return s + '"';
}
