/**
 * A `grpc_health_probe` work-alike (what OLM v0 runs in a catalog Pod's probes: `grpc_health_probe
 * -addr=:50051`), shipped in opcat's image as /bin/grpc_health_probe. Flags: -addr, -service,
 * -connect-timeout, -rpc-timeout (Go durations: 1s, 500ms). Exit codes as grpc_health_probe's: 0 SERVING,
 * 1 bad flags, 2 connection failure, 3 RPC failure, 4 not SERVING.
 */
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";

function duration(v: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(v);
  if (!m) return undefined;
  return Number(m[1]) * (m[2] === "ms" ? 1 : m[2] === "s" ? 1000 : 60_000);
}

export interface ProbeFlags {
  addr: string;
  service: string;
  connectTimeoutMs: number;
  rpcTimeoutMs: number;
}

/** grpc_health_probe's flags (`-flag=value`, `-flag value`, `--flag=value`); a string is an error. */
export function parseProbeFlags(args: string[]): ProbeFlags | string {
  const f: ProbeFlags = { addr: "", service: "", connectTimeoutMs: 1000, rpcTimeoutMs: 1000 };
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([a-z-]+)(?:=(.*))?$/.exec(args[i]);
    if (!m) return `unexpected argument ${args[i]}`;
    const value = m[2] ?? args[++i];
    if (value === undefined) return `flag needs an argument: -${m[1]}`;
    if (m[1] === "addr") f.addr = value;
    else if (m[1] === "service") f.service = value;
    else if (m[1] === "connect-timeout" || m[1] === "rpc-timeout") {
      const ms = duration(value);
      if (ms === undefined) return `invalid value ${JSON.stringify(value)} for flag -${m[1]}`;
      if (m[1] === "connect-timeout") f.connectTimeoutMs = ms;
      else f.rpcTimeoutMs = ms;
    } else return `flag provided but not defined: -${m[1]}`;
  }
  if (!f.addr) return "-addr not specified";
  if (f.addr.startsWith(":")) f.addr = `127.0.0.1${f.addr}`;
  return f;
}

interface HealthClient extends grpc.Client {
  check(
    req: { service: string },
    opts: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: { status: string }) => void,
  ): void;
}

/** Runs the probe; resolves with its exit code (and prints what grpc_health_probe prints). */
export async function probe(
  args: string[],
  out: { write(s: string): unknown } = process.stdout,
  err: { write(s: string): unknown } = process.stderr,
): Promise<number> {
  const f = parseProbeFlags(args);
  if (typeof f === "string") {
    err.write(`error: ${f}\n`);
    return 1;
  }
  const def = protoLoader.loadSync(healthProtoPath, { keepCase: true, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => HealthClient } } };
  };
  const client = new pkg.grpc.health.v1.Health(f.addr, grpc.credentials.createInsecure());
  try {
    const connected = await new Promise<boolean>((resolve) =>
      client.waitForReady(Date.now() + f.connectTimeoutMs, (e) => resolve(!e)),
    );
    if (!connected) {
      err.write(`timeout: failed to connect service ${JSON.stringify(f.addr)} within ${f.connectTimeoutMs}ms\n`);
      return 2;
    }
    const res = await new Promise<{ status: string } | grpc.ServiceError>((resolve) =>
      client.check({ service: f.service }, { deadline: Date.now() + f.rpcTimeoutMs }, (e, r) =>
        resolve(e ?? r ?? { status: "UNKNOWN" }),
      ),
    );
    if ("code" in res) {
      err.write(`error: health rpc failed: ${res.details || res.message}\n`);
      return 3;
    }
    if (res.status !== "SERVING") {
      err.write(`service unhealthy (responded with ${JSON.stringify(res.status)})\n`);
      return 4;
    }
    out.write("status: SERVING\n");
    return 0;
  } finally {
    client.close();
  }
}

/** Entry point of /bin/grpc_health_probe in opcat's image. */
export async function main(args: string[]): Promise<void> {
  process.exitCode = await probe(args);
}
