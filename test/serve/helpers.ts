/**
 * Shared helpers for the serve tests: a generic gRPC caller (unary or server-streaming) that
 * collects every message or the error, and conversions between google.protobuf.Struct and JSON.
 */
import * as grpc from "@grpc/grpc-js";
import type { PackageDefinition } from "@grpc/proto-loader";

export interface CallResult {
  responses: unknown[];
  error?: { code: number; message: string };
}

export type GenericClient = grpc.Client & Record<string, (...args: unknown[]) => unknown>;

/** A client for `service` (e.g. "api.Registry") from a package definition. */
export function makeClient(defs: PackageDefinition, service: string, address: string): GenericClient {
  const Ctor = grpc.makeGenericClientConstructor(defs[service] as grpc.ServiceDefinition, service);
  return new Ctor(address, grpc.credentials.createInsecure()) as unknown as GenericClient;
}

/** Calls `rpc` with `req`, collecting the answer(s). */
export function callRpc(
  client: GenericClient,
  defs: PackageDefinition,
  service: string,
  rpc: string,
  req: object,
  md: Record<string, string> = {},
): Promise<CallResult> {
  const meta = new grpc.Metadata();
  for (const [k, v] of Object.entries(md)) meta.set(k, v);
  const def = (defs[service] as grpc.ServiceDefinition)[rpc];
  if (!def) throw new Error(`no rpc ${service}/${rpc}`);
  return new Promise((resolve) => {
    if (!def.responseStream) {
      client[rpc](req, meta, (err: grpc.ServiceError | null, res: unknown) => {
        if (err) resolve({ responses: [], error: { code: err.code, message: err.details } });
        else resolve({ responses: [res] });
      });
      return;
    }
    const responses: unknown[] = [];
    const call = client[rpc](req, meta) as grpc.ClientReadableStream<unknown>;
    call.on("data", (d) => responses.push(d));
    call.on("error", (err: grpc.ServiceError) =>
      resolve({ responses, error: { code: err.code, message: err.details } }),
    );
    call.on("end", () => resolve({ responses }));
  });
}

type StructValue = {
  kind?: string;
  nullValue?: unknown;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: { fields: Record<string, StructValue> };
  listValue?: { values: StructValue[] };
};

/** google.protobuf.Struct (proto-loader object form, oneofs on) → JSON. */
export function fromStruct(s: { fields?: Record<string, StructValue> }): unknown {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s.fields ?? {})) out[k] = fromValue(v);
  return out;
}

function fromValue(v: StructValue): unknown {
  switch (v.kind) {
    case "nullValue":
      return null;
    case "numberValue":
      return v.numberValue;
    case "stringValue":
      return v.stringValue;
    case "boolValue":
      return v.boolValue;
    case "structValue":
      return fromStruct(v.structValue ?? { fields: {} });
    case "listValue":
      return (v.listValue?.values ?? []).map(fromValue);
    default:
      return null;
  }
}

/** RPCs whose answer order is unspecified in opm (Go map iteration). */
export const UNORDERED = new Set([
  "ListPackages",
  "GetChannelEntriesThatReplace",
  "GetChannelEntriesThatProvide",
  "GetLatestChannelEntriesThatProvide",
]);

/** Canonical JSON (sorted keys) for comparisons. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
  if (v !== null && typeof v === "object") {
    return (
      "{" +
      Object.keys(v)
        .sort()
        .map((k) => JSON.stringify(k) + ":" + canonical((v as Record<string, unknown>)[k]))
        .join(",") +
      "}"
    );
  }
  return JSON.stringify(v);
}

/**
 * Normalises an answer for comparison with an oracle answer: canonical JSON, unordered streams
 * sorted, and (for a proto-loader answer, `fromClient`) Struct messages turned back into JSON.
 */
export function normalizeResponses(rpc: string, responses: unknown[], fromClient: boolean): string[] {
  const isStruct = fromClient && rpc === "ExperimentalListPackageCustomSchemas";
  const out = responses.map((r) => canonical(isStruct ? fromStruct(r as { fields: Record<string, StructValue> }) : r));
  if (UNORDERED.has(rpc)) out.sort();
  return out;
}

import { request } from "node:http";

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One HTTP request on a fresh connection (no automatic content decoding). */
export function httpGet(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}
