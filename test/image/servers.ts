/**
 * Real and fake registries for the image tests, all on 127.0.0.1 with free ports: Debian's
 * `docker-registry` (CNCF distribution), plain or with TLS (a throwaway CA made with openssl) and
 * htpasswd auth (`htpasswd -B`), and a small Node registry that serves an OCI layout and can
 * misbehave on purpose. Under CI=true a missing tool is a failure; elsewhere tests skip with a message.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  createServer as createHttpServer,
  request,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createNetServer } from "node:net";
import { closeSync, mkdirSync, openSync, readFileSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";

/** undefined when every tool is on PATH; otherwise the skip message (throws under CI=true). */
export function requireTools(...tools: string[]): string | undefined {
  const missing = tools.filter((t) => spawnSync("sh", ["-c", `command -v ${t}`]).status !== 0);
  if (missing.length === 0) return undefined;
  const msg = `${missing.join(", ")} not installed (Debian packages docker-registry, skopeo, apache2-utils, openssl)`;
  if (process.env.CI === "true") throw new Error(`${msg}; under CI=true this is a failure`);
  return msg;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function run(cmd: string, args: string[], cwd?: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr || r.error}`);
  return r.stdout;
}

/** A throwaway CA and a server certificate for 127.0.0.1 / localhost. Returns file paths. */
export function makeCerts(dir: string): { ca: string; cert: string; key: string; certDir: string } {
  mkdirSync(dir, { recursive: true });
  run(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "2",
      "-subj",
      "/CN=opcat test CA",
    ],
    dir,
  );
  run(
    "openssl",
    ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
    dir,
  );
  writeFileSync(
    join(dir, "ext.cnf"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n" +
      "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
  );
  run(
    "openssl",
    [
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.crt",
      "-days",
      "2",
      "-extfile",
      "ext.cnf",
    ],
    dir,
  );
  const certDir = join(dir, "certs.d");
  mkdirSync(certDir, { recursive: true });
  writeFileSync(join(certDir, "ca.crt"), readFileSync(join(dir, "ca.crt")));
  return { ca: join(dir, "ca.crt"), cert: join(dir, "server.crt"), key: join(dir, "server.key"), certDir };
}

export interface RunningRegistry {
  host: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts `docker-registry serve` on 127.0.0.1 (optionally with TLS and htpasswd auth) and waits until it listens. */
export async function startDockerRegistry(
  dir: string,
  opts: { tls?: { cert: string; key: string }; htpasswd?: string } = {},
): Promise<RunningRegistry> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const cfg = [
    "version: 0.1",
    "log:",
    "  level: info",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${join(dir, "data")}`,
    "  delete:",
    "    enabled: true",
    "http:",
    `  addr: 127.0.0.1:${port}`,
    ...(opts.tls ? ["  tls:", `    certificate: ${opts.tls.cert}`, `    key: ${opts.tls.key}`] : []),
    ...(opts.htpasswd ? ["auth:", "  htpasswd:", "    realm: opcat-test", `    path: ${opts.htpasswd}`] : []),
  ].join("\n");
  writeFileSync(join(dir, "config.yml"), cfg + "\n");
  // Its log goes to a file, not a pipe: tests run CLI commands with spawnSync, which blocks this
  // process, and a registry writing into a full pipe would stop answering. Ready when the log says
  // "listening on" (written once the listener is bound), seen through file-change events and checked
  // once more after the watch starts: no polling loop, no clock (a registry that never starts is
  // caught by the runner's timeout).
  const logFile = join(dir, "registry.log");
  const fd = openSync(logFile, "w");
  const child: ChildProcess = spawn("docker-registry", ["serve", join(dir, "config.yml")], {
    stdio: ["ignore", "ignore", fd],
  });
  closeSync(fd);
  const log = (): string => readFileSync(logFile, "utf8");
  await new Promise<void>((resolve, reject) => {
    const watcher = watch(logFile);
    const done = (err?: Error): void => {
      watcher.close();
      if (err) reject(err);
      else resolve();
    };
    const check = (): void => {
      if (log().includes('msg="listening on ')) done();
    };
    watcher.on("change", check);
    child.once("error", done);
    child.once("exit", () => done(new Error(`docker-registry exited: ${log()}`)));
    check();
  });
  return {
    host: `127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Writes an htpasswd file with a bcrypt hash (`htpasswd -B`). */
export function makeHtpasswd(file: string, user: string, password: string): void {
  writeFileSync(file, run("htpasswd", ["-Bbn", user, password]));
}

/** Runs skopeo; returns stdout or throws with stderr. */
export function skopeo(args: string[]): string {
  return run("skopeo", ["--insecure-policy", ...args]);
}

// ---------- a misbehaving registry ----------

export type FakeMode =
  | "ok"
  | "corrupt-blob"
  | "huge-manifest"
  | "404"
  | "basic-401"
  | "bearer"
  | "429-once"
  | "500-always"
  | "drop-mid-blob";

export interface FakeRegistry {
  host: string;
  /** Requests seen ("GET /v2/..."). */
  log: string[];
  mode: FakeMode;
  close(): Promise<void>;
}

/**
 * Serves the blobs of `layoutDir` (an OCI layout) for repository `repo`, manifest by tag `tag` or
 * by digest, misbehaving according to `mode`.
 */
export async function startFakeRegistry(
  layoutDir: string,
  repo: string,
  tag: string,
  manifestDigest: string,
  mode: FakeMode,
): Promise<FakeRegistry> {
  const blob = (d: string): Buffer => readFileSync(join(layoutDir, "blobs", d.replace(":", "/")));
  let served429 = false;
  const fake: FakeRegistry = { host: "", log: [], mode, close: async () => undefined };
  const token = "tok-" + Math.random().toString(36).slice(2);
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "http://x");
    fake.log.push(`${req.method} ${url.pathname}`);
    if (url.pathname === "/token") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ token, expires_in: 300 }));
      return;
    }
    if (fake.mode === "bearer" && req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, {
        "WWW-Authenticate": `Bearer realm="http://${fake.host}/token",service="fake",scope="repository:${repo}:pull"`,
        "Content-Type": "application/json",
      });
      res.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "authentication required" }] }));
      return;
    }
    if (fake.mode === "basic-401") {
      res.writeHead(401, { "WWW-Authenticate": `Basic realm="fake"`, "Content-Type": "application/json" });
      res.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "authentication required" }] }));
      return;
    }
    if (fake.mode === "429-once" && !served429) {
      served429 = true;
      res.writeHead(429, { "Retry-After": "0" });
      res.end();
      return;
    }
    if (fake.mode === "500-always") {
      res.writeHead(503);
      res.end("unavailable");
      return;
    }
    if (url.pathname === "/v2/") {
      res.writeHead(200);
      res.end("{}");
      return;
    }
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url.pathname);
    if (!m || m[1] !== repo) {
      res.writeHead(404);
      res.end();
      return;
    }
    if (m[2] === "manifests") {
      if (fake.mode === "404" || (m[3] !== tag && m[3] !== manifestDigest)) {
        res.writeHead(404, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ errors: [{ code: "MANIFEST_UNKNOWN", message: "manifest unknown" }] }));
        return;
      }
      if (fake.mode === "huge-manifest") {
        res.writeHead(200, { "Content-Type": "application/vnd.oci.image.manifest.v1+json" });
        res.end(Buffer.alloc(5 * 1024 * 1024, 0x20));
        return;
      }
      const body = blob(manifestDigest);
      res.writeHead(200, {
        "Content-Type": "application/vnd.oci.image.manifest.v1+json",
        "Docker-Content-Digest": manifestDigest,
        "Content-Length": body.length,
      });
      res.end(req.method === "HEAD" ? undefined : body);
      return;
    }
    let body: Buffer;
    try {
      body = blob(m[3]);
    } catch {
      res.writeHead(404);
      res.end();
      return;
    }
    const isConfig = body.length < 2000 && body.toString("utf8").startsWith("{");
    if (fake.mode === "corrupt-blob" && !isConfig) {
      body = Buffer.from(body);
      body[body.length >> 1] ^= 0xff;
    }
    if (fake.mode === "drop-mid-blob" && !isConfig) {
      res.writeHead(200, { "Content-Length": body.length });
      // the registry goes away mid-pull: once half the body is handed to the kernel (the write's
      // callback), the connection is cut and the server stops listening
      res.write(body.subarray(0, body.length >> 1), () => {
        req.socket.destroy();
        void fake.close();
      });
      return;
    }
    res.writeHead(200, { "Content-Length": body.length, "Content-Type": "application/octet-stream" });
    res.end(body);
  };
  const server: Server = createHttpServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const a = server.address();
  fake.host = `127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
  let closed = false;
  fake.close = () =>
    new Promise<void>((r) => {
      if (closed) return r();
      closed = true;
      server.closeAllConnections();
      server.close(() => r());
    });
  return fake;
}

/** GETs a URL (for readiness checks). */
export function httpGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = request(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    r.on("error", reject);
    r.end();
  });
}
