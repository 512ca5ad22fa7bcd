/**
 * The UI's static files (built by Vite into dist/ui): index.html, /assets/*, the favicon; read once
 * (index.html again while it is missing: a build may come later), gzip-encoded when worth it, with
 * strong ETags.
 */
import { readFileSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { securityHeaders, sendPlain } from "./http.js";

const MIME: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
  ".woff2": "font/woff2",
};

interface Asset {
  body: Buffer;
  gzip?: Buffer;
  type: string;
  etag: string;
}

/** dist/ui, found from this module in both src/web (tests) and dist/web (the package). */
export function defaultUiAssetsDir(): string {
  return fileURLToPath(new URL("../../dist/ui/", import.meta.url));
}

export class UiAssets {
  readonly #dir: string;
  readonly #assets = new Map<string, Asset | null>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** Whether the built UI is present (`npm run build` writes it). */
  available(): boolean {
    return this.#asset("index.html") !== null;
  }

  /** Answers `/`, `/index.html`, `/assets/*`, `/favicon.svg` and `/favicon.ico`; false for other paths. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    const method = req.method ?? "GET";
    if (path === "/favicon.ico") {
      // the page declares its icon (an SVG under /assets/); browsers that still ask for this get "none"
      if (method !== "GET" && method !== "HEAD") return false;
      res.setHeader("Cache-Control", "public, max-age=86400");
      res.writeHead(204);
      res.end();
      return true;
    }
    const file =
      path === "/" || path === "/index.html"
        ? "index.html"
        : path.startsWith("/assets/") || path === "/favicon.svg"
          ? path.slice(1)
          : undefined;
    if (file === undefined) return false;
    if (method !== "GET" && method !== "HEAD") {
      res.setHeader("Allow", "GET, HEAD");
      sendPlain(res, 405, "Method Not Allowed");
      return true;
    }
    const asset = this.#asset(file);
    if (!asset) {
      sendPlain(
        res,
        404,
        file === "index.html"
          ? "the web UI is not built: run `npm run build` (or start with --no-ui)"
          : "404 page not found",
      );
      return true;
    }
    securityHeaders(res);
    res.setHeader("Content-Type", asset.type);
    res.setHeader("ETag", asset.etag);
    res.setHeader("Cache-Control", file.startsWith("assets/") ? "public, max-age=31536000, immutable" : "no-cache");
    res.setHeader("Vary", "Accept-Encoding");
    if (req.headers["if-none-match"] === asset.etag) {
      res.writeHead(304);
      res.end();
      return true;
    }
    let body = asset.body;
    if (asset.gzip && /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""))) {
      body = asset.gzip;
      res.setHeader("Content-Encoding", "gzip");
    }
    res.setHeader("Content-Length", body.length);
    res.writeHead(200);
    res.end(method === "HEAD" ? undefined : body);
    return true;
  }

  #asset(file: string): Asset | null {
    const hit = this.#assets.get(file);
    if (hit !== undefined) return hit;
    let asset: Asset | null = null;
    const full = normalize(join(this.#dir, file));
    if (full.startsWith(normalize(this.#dir + sep)) && !file.includes("..")) {
      try {
        if (statSync(full).isFile()) {
          const body = readFileSync(full);
          const type = MIME[extname(full)] ?? "application/octet-stream";
          const etag = `"${body.length.toString(36)}-${hashOf(body)}"`;
          asset = {
            body,
            type,
            etag,
            gzip: body.length > 1024 && !type.startsWith("image/png") ? gzipSync(body) : undefined,
          };
        }
      } catch {
        asset = null;
      }
    }
    // index.html is re-read while missing (a build may come later); everything else is cached once
    if (asset || file !== "index.html") this.#assets.set(file, asset);
    return asset;
  }
}

function hashOf(b: Buffer): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) {
    h ^= b[i];
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}
