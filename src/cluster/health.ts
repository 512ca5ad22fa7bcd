/**
 * The controller process's probes and metrics on one plain-HTTP port (8080 in the manifests):
 * `/healthz` (liveness: the event loop answers), `/readyz` (readiness: the APIs are installed and the
 * webhooks served; 503 otherwise) and `/metrics` (Prometheus text format 0.0.4).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { prometheusText, type MetricFamily } from "../serve/metrics.js";

export { prometheusText, type MetricFamily } from "../serve/metrics.js";

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

export async function serveHealth(opts: {
  host: string;
  port: number;
  ready: () => boolean;
  metrics: () => MetricFamily[];
}): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/healthz") res.writeHead(200, { "Content-Type": "text/plain" }).end("ok\n");
    else if (path === "/readyz") {
      const ok = opts.ready();
      res.writeHead(ok ? 200 : 503, { "Content-Type": "text/plain" }).end(ok ? "ok\n" : "not ready\n");
    } else if (path === "/metrics")
      res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" }).end(prometheusText(opts.metrics()));
    else res.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
