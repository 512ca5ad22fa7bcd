/** The worker thread of GraphLayouter (graphlayout.ts): lays out one graph per message with elkjs. */
import { parentPort } from "node:worker_threads";
import { layoutWith, loadElk } from "./graphlayout.js";
import type { UiGraph, UiGraphEdge } from "./uitypes.js";

const elk = loadElk();
parentPort?.on("message", (m: { id: number; g: UiGraph; hidden: UiGraphEdge["kind"][] }) => {
  elk
    .then((e) => layoutWith(e, m.g, new Set(m.hidden)))
    .then(
      (layout) => parentPort?.postMessage({ id: m.id, layout }),
      (err: unknown) => parentPort?.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) }),
    );
});
