/**
 * What `dist/config.js` of @kubernetes/client-node (its KubeConfig) imports from the package's generated
 * API, `./gen/index.js`: two names, used only by `KubeConfig.makeApiClient`. That index re-exports every
 * generated model and API class, which costs about 45 MiB of RSS and half the CPU of loading the client;
 * src/cluster/kube/kubeconfig.ts has KubeConfig import this module instead (docs/benchmarks.md).
 */
export { createConfiguration } from "@kubernetes/client-node/dist/gen/configuration.js";
export { ServerConfiguration } from "@kubernetes/client-node/dist/gen/servers.js";
