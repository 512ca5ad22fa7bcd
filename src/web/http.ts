/**
 * What every handler of the web layer shares: one error class for answers that are errors, reading a
 * request body within a limit, the security headers of the UI and its JSON and text answers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** An error answer: HTTP status, stable code, message and (resolver API) the problems behind it. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problems?: { code: string; message: string }[],
  ) {
    super(message);
  }
}

/**
 * Reads the body as UTF-8; rejects with `tooLarge()` as soon as more than `max` bytes are announced
 * or arrive (reading stops there: the rest is never read).
 */
export function readBody(req: IncomingMessage, max: number, tooLarge: () => HttpError): Promise<string> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > max) return Promise.reject(tooLarge());
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    const onData = (c: Buffer): void => {
      n += c.length;
      if (n > max) {
        req.off("data", onData);
        req.pause();
        chunks.length = 0;
        reject(tooLarge());
        return;
      }
      chunks.push(c);
    };
    req.on("data", onData);
    req.on("end", () => resolveBody(Buffer.concat(chunks, n).toString("utf8")));
    req.on("error", reject);
  });
}

/** The policy sent with every UI answer: nothing inline, nothing from elsewhere. */
export const UI_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src " +
  "'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function securityHeaders(res: ServerResponse): void {
  res.setHeader("Content-Security-Policy", UI_CSP);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
}

/** A UI JSON answer (no body for HEAD); a 405 names every method the UI API takes. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (res.headersSent) return void res.destroy();
  sendJsonText(res, status, Buffer.from(JSON.stringify(value)));
}

/** A UI JSON answer whose JSON text is already made (no body for HEAD). */
export function sendJsonText(res: ServerResponse, status: number, body: Buffer): void {
  if (res.headersSent) return void res.destroy();
  securityHeaders(res);
  res.setHeader("Content-Type", "application/json");
  res.setHeader("Cache-Control", "no-cache");
  res.setHeader("Content-Length", body.length);
  if (status === 405) res.setHeader("Allow", "GET, HEAD, POST");
  res.writeHead(status);
  res.end(res.req.method === "HEAD" ? undefined : body);
}

/** A UI text answer (static files' errors): the text and a newline. */
export function sendPlain(res: ServerResponse, status: number, text: string): void {
  securityHeaders(res);
  const body = Buffer.from(text + "\n");
  res.setHeader("Content-Type", "text/plain; charset=utf-8");
  res.setHeader("Content-Length", body.length);
  res.writeHead(status);
  res.end(body);
}
