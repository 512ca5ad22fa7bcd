/**
 * Pulling for someone else (the controllers): an error carries the status code only, never the body or
 * reason phrase of an answer that is not a registry's JSON error (else a pull pointed at an internal
 * service reads its answers back through the status).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { RegistryClient, repoTarget } from "./registry.js";

test("quietErrors keeps a non-registry answer's body and reason phrase out of the error", async () => {
  const server = createServer((_req, res) => {
    res.writeHead(404, "Secret Phrase", { "content-type": "text/plain" });
    res.end("internal: the admin password is hunter2\n");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const message = async (quietErrors: boolean) => {
      const client = new RegistryClient({ useHttp: true, retries: 0, quietErrors });
      try {
        await client.getManifest(repoTarget(`${host}/x`), "latest");
      } catch (e) {
        return (e as Error).message;
      }
      return "no error";
    };
    const loud = await message(false);
    assert.match(loud, /hunter2/, "the CLI shows what the server said");
    const quiet = await message(true);
    assert.match(quiet, /status 404/);
    assert.doesNotMatch(quiet, /hunter2|Secret Phrase/);
  } finally {
    server.close();
  }
});
