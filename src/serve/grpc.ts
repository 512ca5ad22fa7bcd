/**
 * opm's gRPC catalog API over a CatalogStore: `api.Registry`, `api.ExperimentalRegistry`,
 * `grpc.health.v1.Health` (Check always SERVING, like opm) and server reflection (v1 and v1alpha),
 * with @grpc/grpc-js. Each call is answered from one catalog revision, taken when the call starts.
 *
 * opm serves one catalog per server. Here the catalog is the server's default one, unless the
 * caller picks another registered catalog with the request metadata `x-opcat-catalog: <name>`.
 */
import { once } from "node:events";
import { existsSync } from "node:fs";
import { constants as h2, type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { protoPath as healthProtoPath } from "grpc-health-check";
import descriptor from "protobufjs/ext/descriptor/index.js";
import type { JsonObject, JsonValue } from "../fbc/types.js";
import { goQuote } from "../gojson/fmt.js";
import type { RegistryIndex, RpcResult } from "./registry.js";
import type { CatalogRevision } from "./revision.js";
import type { CatalogStore } from "./store.js";

const { FileDescriptorProto } = descriptor;

/** Metadata key selecting a catalog other than the server's default. */
export const CATALOG_METADATA_KEY = "x-opcat-catalog";
const ACK_EXPERIMENTAL = "x-acknowledge-experimental";

export interface GrpcServeOptions {
  /** Host to listen on. Default 127.0.0.1. */
  host?: string;
  /** Port (0 picks a free one). Default 50051. */
  port?: number;
  /** The catalog answered by default. Default: the first registered one. */
  catalog?: string;
  /** Called with one JSON line per call when set. */
  accessLog?: (line: string) => void;
}

export interface GrpcServerHandle {
  readonly server: grpc.Server;
  readonly port: number;
  /** Stops accepting calls, lets running ones finish (up to `graceMs`, default 10 s), then closes. */
  close(graceMs?: number): Promise<void>;
}

/** Path of opcat's registry.proto (next to this module, or in the source tree when running from dist/). */
export function registryProtoPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, "proto", "registry.proto"),
    join(here, "..", "..", "src", "serve", "proto", "registry.proto"),
  ];
  for (const c of candidates) if (existsSync(c)) return c;
  return candidates[0];
}

function reflectionProtoDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("@grpc/reflection/package.json")), "build", "proto");
}

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The package definition of every service the server offers (also what reflection describes). */
export function loadServiceDefinitions(): protoLoader.PackageDefinition {
  const refl = reflectionProtoDir();
  const defs = protoLoader.loadSync(
    [
      registryProtoPath(),
      healthProtoPath,
      join(refl, "grpc/reflection/v1/reflection.proto"),
      join(refl, "grpc/reflection/v1alpha/reflection.proto"),
    ],
    {
      ...LOADER_OPTIONS,
      includeDirs: [refl],
    },
  );
  repairDescriptors(defs);
  return defs;
}

/**
 * proto-loader regroups definitions into one file descriptor per package ("api.proto",
 * "google_protobuf.proto") that reflection hands out as they are. Two details make strict
 * clients (grpcurl, Go's protodesc) reject them: the import of the file defining
 * google.protobuf.Struct is lost, and map entry types are named `Fields` instead of protoc's
 * `FieldsEntry`. Both are repaired here, in place.
 */
function repairDescriptors(defs: protoLoader.PackageDefinition): void {
  const arrays = Object.values(defs)
    .map((d) => (d as { fileDescriptorProtos?: Buffer[] }).fileDescriptorProtos)
    .filter((a): a is Buffer[] => Array.isArray(a));
  const files = new Map<Buffer, FileDescriptor>();
  for (const arr of arrays)
    for (const b of arr)
      if (!files.has(b)) files.set(b, FileDescriptorProto.toObject(FileDescriptorProto.decode(b)) as FileDescriptor);
  // Which file defines each top-level type.
  const owner = new Map<string, string>();
  for (const f of files.values())
    for (const m of [...(f.messageType ?? []), ...(f.enumType ?? [])])
      owner.set(`.${f.package ? f.package + "." : ""}${m.name}`, f.name);
  const patched = new Map<Buffer, Buffer>();
  for (const [b, f] of files) {
    const deps = new Set(f.dependency ?? []);
    const refer = (typeName: string | undefined): void => {
      if (!typeName?.startsWith(".")) return;
      const parts = typeName.split(".");
      for (let n = parts.length; n > 1; n--) {
        const o = owner.get(parts.slice(0, n).join("."));
        if (o !== undefined) {
          if (o !== f.name) deps.add(o);
          return;
        }
      }
    };
    let changed = false;
    const visit = (m: MessageDescriptor): void => {
      for (const nt of m.nestedType ?? []) {
        if (nt.options?.mapEntry && !nt.name.endsWith("Entry")) {
          const field = (m.field ?? []).find((fd) => fd.typeName === nt.name || fd.typeName?.endsWith("." + nt.name));
          const entry = nt.name + "Entry";
          if (field) field.typeName = field.typeName?.slice(0, -nt.name.length) + entry;
          nt.name = entry;
          changed = true;
        }
        visit(nt);
      }
      for (const fd of m.field ?? []) refer(fd.typeName);
    };
    for (const m of f.messageType ?? []) visit(m);
    for (const svc of f.service ?? []) for (const md of svc.method ?? []) refer(md.inputType), refer(md.outputType);
    if (deps.size !== (f.dependency ?? []).length) {
      f.dependency = [...deps];
      changed = true;
    }
    if (changed) patched.set(b, Buffer.from(FileDescriptorProto.encode(FileDescriptorProto.fromObject(f)).finish()));
  }
  for (const arr of arrays) for (let i = 0; i < arr.length; i++) arr[i] = patched.get(arr[i]) ?? arr[i];
}

interface FieldDescriptor {
  name: string;
  typeName?: string;
}
interface MessageDescriptor {
  name: string;
  field?: FieldDescriptor[];
  nestedType?: MessageDescriptor[];
  options?: { mapEntry?: boolean };
}
interface FileDescriptor {
  name: string;
  package?: string;
  dependency?: string[];
  messageType?: MessageDescriptor[];
  enumType?: { name: string }[];
  service?: { method?: { inputType?: string; outputType?: string }[] }[];
}

type Unary = grpc.handleUnaryCall<Record<string, string>, unknown>;
type ServerStream = grpc.handleServerStreamingCall<Record<string, string>, unknown>;

/** Builds the gRPC server with every service registered (not yet bound). */
/** A revision built with its gRPC index (every revision of a store made for gRPC). */
type GrpcRevision = CatalogRevision & { readonly registry: RegistryIndex };

export function createGrpcServer(
  store: CatalogStore,
  opts: Pick<GrpcServeOptions, "catalog" | "accessLog"> = {},
): grpc.Server {
  const defs = loadServiceDefinitions();
  const server = new grpc.Server();
  const pick = (md: grpc.Metadata): GrpcRevision | grpc.ServiceError => {
    const wanted = md.get(CATALOG_METADATA_KEY)[0];
    const name = typeof wanted === "string" && wanted !== "" ? wanted : (opts.catalog ?? store.names()[0]);
    const rev = name === undefined ? undefined : store.get(name);
    if (rev?.registry) return rev as GrpcRevision;
    if (rev)
      return rpcError(grpc.status.UNIMPLEMENTED, `catalog ${JSON.stringify(name)} is served without its gRPC index`);
    const known = name !== undefined && store.names().includes(name);
    return rpcError(
      known ? grpc.status.UNAVAILABLE : grpc.status.NOT_FOUND,
      known
        ? `catalog ${JSON.stringify(name)} has no valid content yet`
        : `catalog ${JSON.stringify(name ?? "")} not found`,
    );
  };
  const logCall = (
    method: string,
    md: grpc.Metadata,
    peer: string,
    started: bigint,
    code: number,
    messages: number,
  ): void => {
    if (!opts.accessLog) return;
    opts.accessLog(
      JSON.stringify({
        time: new Date().toISOString(),
        level: "info",
        msg: "rpc",
        method,
        code,
        messages,
        duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
        peer,
        catalog: md.get(CATALOG_METADATA_KEY)[0] ?? opts.catalog ?? store.names()[0] ?? "",
      }),
    );
  };

  const unary =
    (
      method: string,
      fn: (rev: GrpcRevision, req: Record<string, string>) => RpcResult<unknown> | Promise<RpcResult<unknown>>,
    ): Unary =>
    (call, callback) => {
      const started = process.hrtime.bigint();
      const rev = pick(call.metadata);
      const answer = (r: RpcResult<unknown>): void => {
        if (r.ok) callback(null, r.value);
        else callback(rpcError(r.error.code as grpc.status, r.error.message));
        logCall(method, call.metadata, call.getPeer(), started, r.ok ? 0 : r.error.code, r.ok ? 1 : 0);
      };
      if (rev instanceof Error) return answer({ ok: false, error: { code: rev.code, message: rev.details } });
      const r = fn(rev, call.request);
      if ("then" in r) r.then(answer, (e: unknown) => answer(internalError(e)));
      else answer(r);
    };

  const stream =
    (
      method: string,
      fn: (
        rev: GrpcRevision,
        req: Record<string, string>,
        md: grpc.Metadata,
      ) => RpcResult<Iterable<unknown> | AsyncIterable<unknown>>,
    ): ServerStream =>
    (call) => {
      const started = process.hrtime.bigint();
      const rev = pick(call.metadata);
      const r: RpcResult<Iterable<unknown> | AsyncIterable<unknown>> =
        rev instanceof Error
          ? { ok: false, error: { code: rev.code, message: rev.details } }
          : fn(rev, call.request, call.metadata);
      if (!r.ok) {
        call.emit("error", rpcError(r.error.code as grpc.status, r.error.message));
        logCall(method, call.metadata, call.getPeer(), started, r.error.code, 0);
        return;
      }
      void writeAll(call, r.value).then(
        (n) => logCall(method, call.metadata, call.getPeer(), started, call.cancelled ? grpc.status.CANCELLED : 0, n),
        (e: unknown) => {
          const err = internalError(e).error;
          call.emit("error", rpcError(err.code as grpc.status, err.message));
          logCall(method, call.metadata, call.getPeer(), started, err.code, 0);
        },
      );
    };

  server.addService(sendsEncodedBundles(defs["api.Registry"] as grpc.ServiceDefinition), {
    ListPackages: stream("ListPackages", (rev) => ({
      ok: true,
      value: rev.registry.listPackages().map((name) => ({ name })),
    })),
    GetPackage: unary("GetPackage", (rev, q) => rev.registry.getPackage(q.name)),
    GetBundle: unary("GetBundle", (rev, q) => rev.registry.getBundle(q.pkgName, q.channelName, q.csvName)),
    GetBundleForChannel: unary("GetBundleForChannel", (rev, q) =>
      rev.registry.getBundleForChannel(q.pkgName, q.channelName),
    ),
    GetChannelEntriesThatReplace: stream("GetChannelEntriesThatReplace", (rev, q) =>
      rev.registry.getChannelEntriesThatReplace(q.csvName),
    ),
    GetBundleThatReplaces: unary("GetBundleThatReplaces", (rev, q) =>
      rev.registry.getBundleThatReplaces(q.csvName, q.pkgName, q.channelName),
    ),
    GetChannelEntriesThatProvide: stream("GetChannelEntriesThatProvide", (rev, q) =>
      rev.registry.getChannelEntriesThatProvide(q.group, q.version, q.kind),
    ),
    GetLatestChannelEntriesThatProvide: stream("GetLatestChannelEntriesThatProvide", (rev, q) =>
      rev.registry.getLatestChannelEntriesThatProvide(q.group, q.version, q.kind),
    ),
    GetDefaultBundleThatProvides: unary("GetDefaultBundleThatProvides", (rev, q) =>
      rev.registry.getDefaultBundleThatProvides(q.group, q.version, q.kind),
    ),
    ListBundles: stream("ListBundles", (rev) => ({ ok: true, value: rev.registry.listBundles() })),
  });
  server.addService(defs["api.ExperimentalRegistry"] as grpc.ServiceDefinition, {
    ExperimentalListPackageCustomSchemas: stream("ExperimentalListPackageCustomSchemas", (rev, q, md) => {
      // Callers that do not acknowledge the experimental API get an empty answer.
      if (md.get(ACK_EXPERIMENTAL)[0] !== "true") return { ok: true, value: [] };
      const r = rev.registry.listPackageCustomSchemas(q.schema, q.packageName);
      return r.ok ? { ok: true, value: r.value.map(toStruct) } : r;
    }),
  });
  server.addService(defs["grpc.health.v1.Health"] as grpc.ServiceDefinition, {
    Check: ((_call, callback) => callback(null, { status: "SERVING" })) as Unary,
    Watch: ((call) =>
      call.emit("error", rpcError(grpc.status.UNIMPLEMENTED, "method Watch not implemented"))) as ServerStream,
  });
  new ReflectionService(defs).addToServer(server);
  checkRequestsAsGrpcGo(server, defs);
  return server;
}

/**
 * Where grpc-js and grpc-go (v1.82.1, opm v1.73.0's) answer a malformed request differently, answers
 * as grpc-go:
 * - a content-type other than `application/grpc` (or `application/grpc+…`/`;…`): HTTP 415 with
 *   InvalidArgument `invalid gRPC request content-type "…"` (grpc-js: a bare 415);
 * - a body that ends inside a message it reads: `unexpected EOF`, Unknown for unary methods and
 *   Internal for streaming ones; no message at all (or part of a message header): Unknown `EOF` for
 *   unary methods, Internal `cardinality violation: …` for server-streaming ones (grpc-js:
 *   Unimplemented `Received no request message …`);
 * - a message with the compressed flag but no (or identity) grpc-encoding, or another flag value:
 *   Internal (grpc-js reads it as uncompressed).
 * grpc-js offers no hook below its message decoder, so this takes the place of its
 * `_verifyContentType(stream, headers)`, which it calls on every new stream before attaching its own
 * listeners; a stream answered here is closed at once, so grpc-js, finding it closed, stays silent.
 */
function checkRequestsAsGrpcGo(server: grpc.Server, defs: protoLoader.PackageDefinition): void {
  // messages grpc-go reads per method: unary 1, server-streaming 2 (the second must be EOF), client-streaming all
  const reads = new Map<string, { unary: boolean; clientStreams: boolean; max: number }>();
  for (const def of Object.values(defs)) {
    if ("format" in def) continue;
    for (const m of Object.values(def as grpc.ServiceDefinition)) {
      const unary = !m.requestStream && !m.responseStream;
      reads.set(m.path, { unary, clientStreams: m.requestStream, max: m.requestStream ? Infinity : unary ? 1 : 2 });
    }
  }
  const internals = server as unknown as {
    _verifyContentType?: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => boolean;
  };
  if (typeof internals._verifyContentType !== "function")
    throw new Error("@grpc/grpc-js has no Server._verifyContentType to extend: its internals changed");
  internals._verifyContentType = (stream, headers) => {
    const contentType = headers["content-type"] ?? "";
    const grpcType = contentType === "application/grpc" || /^application\/grpc[+;]/.test(contentType);
    if (!grpcType) {
      earlyStatus(
        stream,
        415,
        "application/grpc",
        grpc.status.INVALID_ARGUMENT,
        `invalid gRPC request content-type ${goQuote(contentType)}`,
      );
      return false;
    }
    const method = reads.get(headers[":path"] ?? "");
    if (!method) return true; // grpc-js answers Unimplemented, as grpc-go
    const encoding = headers["grpc-encoding"] ?? "";
    const subtype = contentType.slice("application/grpc+".length);
    const fail = (code: grpc.status, message: string): void => {
      if (!stream.headersSent && !stream.closed && !stream.destroyed)
        earlyStatus(stream, 200, subtype === "" ? "application/grpc" : `application/grpc+${subtype}`, code, message);
    };
    // The message framing (a 5-byte prefix: flag and length), followed alongside grpc-js's decoder.
    const prefix = Buffer.alloc(5);
    let have = 0; // prefix bytes of the current message seen
    let left = -1; // payload bytes of the current message still to come, -1 while in the prefix
    let messages = 0;
    stream.on("data", (chunk: Buffer) => {
      for (let i = 0; i < chunk.length && messages < method.max; ) {
        if (left < 0) {
          const n = Math.min(5 - have, chunk.length - i);
          chunk.copy(prefix, have, i, i + n);
          have += n;
          i += n;
          if (have === 5) left = prefix.readUInt32BE(1);
        } else {
          const n = Math.min(left, chunk.length - i);
          left -= n;
          i += n;
        }
        if (left !== 0) continue;
        // A whole message: grpc-go checks its flag now (rpc_util.go checkRecvPayload).
        const flag = prefix[0];
        if (flag === 1 && (encoding === "" || encoding === "identity"))
          return fail(grpc.status.INTERNAL, "grpc: compressed flag set with identity or empty encoding");
        if (flag > 1) return fail(grpc.status.INTERNAL, `grpc: received unexpected payload format ${flag}`);
        messages += 1;
        have = 0;
        left = -1;
      }
    });
    stream.on("end", () => {
      if (messages >= method.max) return;
      if (left > 0) fail(method.unary ? grpc.status.UNKNOWN : grpc.status.INTERNAL, "unexpected EOF");
      else if (messages === 0 && !method.clientStreams)
        fail(
          method.unary ? grpc.status.UNKNOWN : grpc.status.INTERNAL,
          method.unary ? "EOF" : "cardinality violation: received no request message from non-client-streaming RPC",
        );
    });
    return true;
  };
}

/**
 * A headers-only answer carrying the gRPC status, as grpc-go's early aborts and trailers-only
 * statuses, then the stream is closed (RST_STREAM NO_ERROR if the request was still open).
 */
function earlyStatus(
  stream: ServerHttp2Stream,
  httpStatus: number,
  contentType: string,
  code: grpc.status,
  message: string,
): void {
  stream.respond(
    {
      ":status": httpStatus,
      "content-type": contentType,
      "grpc-status": String(code),
      "grpc-message": encodeGrpcMessage(message),
    },
    { endStream: true },
  );
  stream.close(h2.NGHTTP2_NO_ERROR);
}

/** grpc-go's encodeGrpcMessage: UTF-8 bytes outside printable ASCII, and `%`, percent-encoded. */
function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const b of Buffer.from(message, "utf8"))
    out +=
      b >= 0x20 && b <= 0x7e && b !== 0x25
        ? String.fromCharCode(b)
        : "%" + b.toString(16).toUpperCase().padStart(2, "0");
  return out;
}

/** Binds and starts the gRPC server. */
export async function startGrpcServer(store: CatalogStore, opts: GrpcServeOptions = {}): Promise<GrpcServerHandle> {
  const server = createGrpcServer(store, opts);
  const host = opts.host ?? "127.0.0.1";
  const target =
    host.includes(":") && !host.startsWith("[") ? `[${host}]:${opts.port ?? 50051}` : `${host}:${opts.port ?? 50051}`;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    server,
    port,
    close(graceMs = 10_000) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.forceShutdown(), graceMs);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

function rpcError(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
}

/** A failure reading a catalog revision's index (an I/O error): gRPC Internal. */
function internalError(e: unknown): { ok: false; error: { code: number; message: string } } {
  return { ok: false, error: { code: grpc.status.INTERNAL, message: `read catalog index: ${(e as Error).message}` } };
}

/**
 * The registry answers bundles already encoded (registry.ts, pb.ts): methods answering
 * `api.Bundle` send such a buffer as it is instead of encoding an object.
 */
function sendsEncodedBundles(def: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, m] of Object.entries(def)) {
    const encode = m.responseSerialize;
    const typeName = (m as { responseType?: { type?: { name?: string } } }).responseType?.type?.name;
    out[name] =
      typeName === "Bundle" ? { ...m, responseSerialize: (v: unknown) => (Buffer.isBuffer(v) ? v : encode(v)) } : m;
  }
  return out as grpc.ServiceDefinition;
}

/** Streams messages with back-pressure; stops when the caller cancels. Returns how many were sent. */
async function writeAll(
  call: grpc.ServerWritableStream<unknown, unknown>,
  items: Iterable<unknown> | AsyncIterable<unknown>,
): Promise<number> {
  let n = 0;
  for await (const item of items) {
    if (call.cancelled || call.destroyed) return n;
    n++;
    if (!call.write(item)) {
      const ac = new AbortController();
      await Promise.race([
        once(call, "drain", { signal: ac.signal }),
        once(call, "cancelled", { signal: ac.signal }),
        once(call, "close", { signal: ac.signal }),
      ]).catch(() => undefined);
      ac.abort();
    }
  }
  if (!call.cancelled) call.end();
  return n;
}

/** A JSON object as a google.protobuf.Struct message (proto-loader object form). */
export function toStruct(o: JsonObject): { fields: Record<string, unknown> } {
  const fields: Record<string, unknown> = {};
  for (const k of Object.keys(o)) fields[k] = toValue(o[k]);
  return { fields };
}

function toValue(v: JsonValue): unknown {
  if (v === null) return { nullValue: "NULL_VALUE" };
  if (typeof v === "number") return { numberValue: v };
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toValue) } };
  return { structValue: toStruct(v) };
}
