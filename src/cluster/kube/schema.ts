/**
 * One typed source for opcat's custom resources: each schema built here is both an OpenAPI v3
 * structural schema (what the CRD carries, so the API server validates every object) and, through
 * {@link Infer}, the TypeScript type the controllers use. Nothing is declared twice.
 */

export interface OpenApi {
  type?: "object" | "array" | "string" | "integer" | "boolean" | "number";
  description?: string;
  properties?: Record<string, OpenApi>;
  required?: string[];
  items?: OpenApi;
  additionalProperties?: OpenApi | boolean;
  enum?: (string | number)[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  minProperties?: number;
  default?: unknown;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-list-type"?: "map" | "set" | "atomic";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: "atomic" | "granular";
  "x-kubernetes-validations"?: { rule: string; message: string }[];
}

/** A schema carrying its TypeScript type as a phantom. */
export interface Schema<T> {
  readonly openapi: OpenApi;
  readonly __type?: T;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

type Opts = Omit<OpenApi, "type" | "properties" | "items" | "required">;

export function str(opts: Opts = {}): Schema<string> {
  return { openapi: { type: "string", ...opts } };
}
export function enumOf<const E extends string>(values: readonly E[], opts: Opts = {}): Schema<E> {
  return { openapi: { type: "string", enum: [...values], ...opts } };
}
export function int(opts: Opts = {}): Schema<number> {
  return { openapi: { type: "integer", ...opts } };
}
export function bool(opts: Opts = {}): Schema<boolean> {
  return { openapi: { type: "boolean", ...opts } };
}
export function arr<T>(items: Schema<T>, opts: Opts = {}): Schema<T[]> {
  return { openapi: { type: "array", items: items.openapi, ...opts } };
}
export function map<T>(values: Schema<T>, opts: Opts = {}): Schema<Record<string, T>> {
  return { openapi: { type: "object", additionalProperties: values.openapi, ...opts } };
}
/** Free-form JSON (an object whose fields the API server keeps as they are). */
export function freeform(opts: Opts = {}): Schema<Record<string, unknown>> {
  return { openapi: { type: "object", "x-kubernetes-preserve-unknown-fields": true, ...opts } };
}

/** An integer or a string (a resource.Quantity, an IntOrString). */
export function intOrString(opts: Opts = {}): Schema<string | number> {
  return { openapi: { "x-kubernetes-int-or-string": true, ...opts } };
}

type Props = Record<string, Schema<unknown>>;
type Req<P extends Props, R extends keyof P> = { [K in R]: Infer<P[K]> } & { [K in Exclude<keyof P, R>]?: Infer<P[K]> };

export function obj<P extends Props, const R extends keyof P & string = never>(
  props: P,
  required: readonly R[] = [],
  opts: Opts = {},
): Schema<Req<P, R>> {
  const properties: Record<string, OpenApi> = {};
  for (const [k, v] of Object.entries(props)) properties[k] = v.openapi;
  const o: OpenApi = { type: "object", properties, ...opts };
  if (required.length > 0) o.required = [...required];
  return { openapi: o };
}

/** metav1.Condition. */
export const conditionSchema = obj(
  {
    type: str({ maxLength: 316 }),
    status: enumOf(["True", "False", "Unknown"] as const),
    reason: str({ maxLength: 1024 }),
    message: str({ maxLength: 32768 }),
    lastTransitionTime: str({ format: "date-time" }),
    observedGeneration: int({ minimum: 0 }),
  },
  ["type", "status", "reason", "message", "lastTransitionTime"],
);

export const conditionsSchema = arr(conditionSchema, {
  "x-kubernetes-list-type": "map",
  "x-kubernetes-list-map-keys": ["type"],
});

/** metav1.LabelSelector. */
export const labelSelectorSchema = obj({
  matchLabels: map(str()),
  matchExpressions: arr(
    obj({ key: str(), operator: enumOf(["In", "NotIn", "Exists", "DoesNotExist"] as const), values: arr(str()) }, [
      "key",
      "operator",
    ]),
  ),
});
export type LabelSelector = Infer<typeof labelSelectorSchema>;

export interface CrdDefinition {
  group: string;
  kind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  categories?: string[];
  scope: "Cluster" | "Namespaced";
  version: string;
  description: string;
  /** The schema of the whole object's own fields (spec, status, or top-level fields). */
  fields: Record<string, OpenApi>;
  required?: string[];
  printerColumns?: { name: string; type: string; jsonPath: string; description?: string; priority?: number }[];
  status?: boolean;
}

/** The CustomResourceDefinition object of a definition. */
export function crdObject(d: CrdDefinition): Record<string, unknown> {
  const schema: OpenApi = {
    type: "object",
    description: d.description,
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      ...d.fields,
    },
  };
  if (d.required?.length) schema.required = d.required;
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${d.plural}.${d.group}`, labels: { "app.kubernetes.io/part-of": "opcat" } },
    spec: {
      group: d.group,
      names: {
        kind: d.kind,
        listKind: `${d.kind}List`,
        plural: d.plural,
        singular: d.singular,
        ...(d.shortNames ? { shortNames: d.shortNames } : {}),
        ...(d.categories ? { categories: d.categories } : {}),
      },
      scope: d.scope,
      versions: [
        {
          name: d.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          ...(d.status !== false ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: [
            ...(d.printerColumns ?? []),
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
        },
      ],
    },
  };
}
