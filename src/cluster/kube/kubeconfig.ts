/**
 * KubeConfig from @kubernetes/client-node without the package's generated API. The client loads the
 * kubeconfig and authenticates (client certificates, tokens, exec plugins, in-cluster config); opcat's
 * own REST client (src/cluster/kube/client.ts) does the rest, so neither the package root nor the generated
 * models and API classes are needed. The package has no `exports` map, so its `dist/config.js` can be
 * imported alone, but that file imports two names from `./gen/index.js`, which loads every generated
 * class: while KubeConfig loads, a module resolve hook points that one import at src/cluster/kube/kubegen.ts
 * (the same two names from their own files). Loading the client so costs about 35 MiB of RSS and 0.4 s of
 * CPU instead of 80 MiB and 0.9 s (docs/benchmarks.md). A Node without `module.registerHooks` (before
 * 22.15) loads the whole index, as before.
 */
import * as nodeModule from "node:module";
import type { KubeConfig as KubeConfigClass } from "@kubernetes/client-node/dist/config.js";

const CONFIG = "/@kubernetes/client-node/dist/config.js";

async function loadConfigModule(): Promise<typeof import("@kubernetes/client-node/dist/config.js")> {
  const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
  const kubegen = new URL(`./kubegen${ext}`, import.meta.url).href;
  const hooks = nodeModule.registerHooks?.({
    resolve(specifier, context, next) {
      if (specifier === "./gen/index.js" && context.parentURL?.endsWith(CONFIG)) {
        return { url: kubegen, shortCircuit: true };
      }
      return next(specifier, context);
    },
  });
  try {
    return await import("@kubernetes/client-node/dist/config.js");
  } finally {
    hooks?.deregister();
  }
}

export const { KubeConfig } = await loadConfigModule();
export type KubeConfig = KubeConfigClass;
