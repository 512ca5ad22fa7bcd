/**
 * What the table tests of the controllers that resolve over served catalogs (deppy/resolver.test.ts,
 * olm/extension.test.ts) run beside: a real ClusterCatalog controller on the in-memory API server
 * (runtime/controllerkit.test.ts), and ClusterCatalog "main" pulling a catalog image written from an
 * FBC text into a temporary directory. (No tests of its own.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FakeKube } from "../kube/fake.js";
import type { WorkQueue } from "../kube/queue.js";
import { catalogImage, settled } from "../runtime/controllerkit.test.js";
import { CATALOG_API_VERSION, type ClusterCatalog } from "./api.js";
import { CatalogController } from "./catalogs.js";

/** The catalog side of a test's world. */
export interface CatalogBeside {
  catalogs: CatalogController;
  /** A new temporary directory: the catalog controller's state and the image's OCI layout. */
  tmp: string;
}

/** The controller a table tests beside the catalogs. */
interface Tested {
  queue: WorkQueue;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A ClusterCatalog controller on `api`, not started, and ClusterCatalog "main" pulling the catalog
 * image of the FBC text `content` (served once the controller runs).
 */
export async function catalogBeside(api: FakeKube, prefix: string, content: string): Promise<CatalogBeside> {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const catalogs = new CatalogController({ client: api, stateDir: join(tmp, "state") });
  const ref = await publish({ catalogs, tmp }, content);
  await api.create<ClusterCatalog>({
    apiVersion: CATALOG_API_VERSION,
    kind: "ClusterCatalog",
    metadata: { name: "main" },
    spec: { source: { type: "Image", image: { ref } } },
  });
  return { catalogs, tmp };
}

/**
 * Writes the catalog image of the FBC text `content` where ClusterCatalog "main" pulls it from (the
 * same reference, a new digest for new content): its reference.
 */
export async function publish(c: CatalogBeside, content: string): Promise<string> {
  return (await catalogImage(c.tmp, content)).ref;
}

/** Starts the catalog controller, then `ctl`, and waits until both queues are idle. */
export async function startBeside(c: CatalogBeside, ctl: Tested): Promise<void> {
  await c.catalogs.start();
  await ctl.start();
  await settled(c.catalogs.queue, ctl.queue);
}

/** Stops `ctl`, then the catalog controller, and removes the temporary directory. */
export async function stopBeside(c: CatalogBeside, ctl: Tested): Promise<void> {
  await ctl.stop();
  await c.catalogs.stop();
  rmSync(c.tmp, { recursive: true, force: true });
}
