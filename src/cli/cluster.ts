/**
 * `opcat cluster manifests|image|run` and `opcat instance list|describe|approve` (also shipped as the
 * kubectl plugin `kubectl-instance`): flags → src/action/cluster.ts → print.
 */
import { type Command, Option } from "commander";
import type * as CALib from "../action/cluster.js";
import { DEFAULT_NAMESPACE } from "../cluster/kube/names.js";
import { addImageAccessOptions, imageAccessFrom, type ImageAccessFlags } from "./access.js";
import { loadOnAction } from "./lazy.js";

// The cluster actions load the Kubernetes client (@kubernetes/client-node) and the controllers, which take
// most of a second: loaded when a cluster command runs, not for every opcat command.
let CA: typeof CALib;

type KubeFlags = CALib.ClusterTarget;

function kubeOptions(cmd: Command): Command {
  return cmd
    .option("--kubeconfig <file>", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
    .option("--context <name>", "kubeconfig context (default: its current context)");
}

export function registerClusterCommands(program: Command): void {
  const cluster = program.command("cluster");
  const instance = program.command("instance");
  loadOnAction([cluster, instance], async () => {
    CA = await import("../action/cluster.js");
  });
  cluster.description("Run opcat's RukPak provisioners on a Kubernetes cluster (Bundle, Instance, ProvisionerClass)");
  cluster
    .command("manifests")
    .description(
      "Print what running opcat in a cluster needs (CRDs, default ProvisionerClasses, " +
        "RBAC, Deployment, Service); --local: only the APIs and classes; apply --crds-only first " +
        "(then `kubectl wait --for condition=established crd -l app.kubernetes.io/part-of=opcat`): " +
        "kubectl cannot map the classes' kinds before their CRDs are established",
    )
    .option(
      "--local",
      "only the APIs, default classes and user roles (for `opcat cluster run` outside the cluster)",
      false,
    )
    .option("--crds-only", "only the CustomResourceDefinitions, to apply (and wait for) before the rest", false)
    .option("--namespace <ns>", "namespace of the controller", DEFAULT_NAMESPACE)
    .option("--image <ref>", "image that runs `opcat cluster run` (build one with `opcat cluster image`)")
    .option(
      "--registries-conf <file>",
      "registries.conf (mirrors, insecure registries) for the controllers' pulls, shipped as a ConfigMap",
    )
    .addOption(new Option("-o, --output <format>", "yaml or json").choices(["yaml", "json"]).default("yaml"))
    .action(
      async (o: {
        local: boolean;
        crdsOnly: boolean;
        namespace: string;
        image?: string;
        output: "yaml" | "json";
        registriesConf?: string;
      }) => {
        const objs = await CA.clusterManifestsAction({ ...o, registriesConfFile: o.registriesConf });
        process.stdout.write(await CA.formatObjects(objs, o.output));
      },
    );

  addImageAccessOptions(
    cluster
      .command("image")
      .description(
        "Build opcat's own image without a container engine: a Node runtime (linux/amd64), opcat and its " +
          "production dependencies, nothing else; runs as uid 65532 with a read-only root file system; " +
          "reproducible (same inputs, same digest)",
      )
      .requiredOption("-t, --tag <ref>", "oci:<dir>:<tag> for an OCI layout, or a registry reference with --push")
      .option("--push", "push to the registry reference given with --tag")
      .option(
        "--node-binary <file>",
        "the Node binary to ship (default: the one running opcat; it must be linux/amd64, e.g. the npm " +
          "package node@24's)",
      ),
    "while pushing the image",
  ).action(async (o: ImageAccessFlags & { tag: string; push?: boolean; nodeBinary?: string }) => {
    const built = await CA.clusterImageAction({ ...o, access: () => imageAccessFrom(o, "pushing") });
    process.stderr.write(`opcat image (${built.nodeVersion}): ${(built.bytes / 1048576).toFixed(1)} MiB compressed\n`);
    process.stdout.write(`${built.where}\n`);
  });

  const run = kubeOptions(
    cluster
      .command("run")
      .description(
        "Run the controllers until interrupted: the RukPak provisioners (operator: registry+v1, plain) with " +
          "their admission webhooks, ClusterCatalogs (pulled, polled and served over catalogd's HTTP API), " +
          "Deppy (Inputs resolved continually into resolveset Bundles and Instances, Android approval) and the " +
          "Operator API; from outside the cluster the webhooks are served on 127.0.0.1 and registered by URL",
      )
      .option("--state-dir <dir>", "where unpacked bundles and pulled images are kept (default: <cache dir>/cluster)")
      .option("--webhook-host <addr>", "address the webhook server listens on", "127.0.0.1")
      .option("--webhook-port <port>", "port of the webhook server (0: any free port)", "0")
      .option("--webhook-service <ns/name:port>", "in a cluster: register the webhooks through this Service")
      .option(
        "--no-webhooks",
        "do not serve or register the admission webhooks (no requester can then be verified: every Instance " +
          "waits for kubectl instance approve)",
      )
      .option("--webhook-name <name>", "name of the webhook configurations", "opcat-rukpak")
      .option("--no-install", "do not apply the CRDs and default ProvisionerClasses at start")
      .option("--leader-elect-namespace <ns>", "elect a leader on a Lease in this namespace (for several replicas)")
      .option("--no-deppy", "run only the RukPak provisioners (no ClusterCatalogs, Inputs or Operators)")
      .option(
        "--namespace <ns>",
        "the controllers' namespace: the signing key, install records, resolveset ConfigMaps (grant users " +
          "nothing there)",
        "opcat-system",
      )
      .option("--resolution-budget <seconds>", "the time one resolution may take in its worker thread", "60")
      .option("--catalog-host <addr>", "address the ClusterCatalog HTTP server listens on", "127.0.0.1")
      .option("--catalog-port <port>", "port of the ClusterCatalog HTTP server (0: any free port)", "0")
      .option(
        "--catalog-advertise <host:port>",
        "host:port written into ClusterCatalogs' status.urls.base (default: the address bound)",
      )
      .option(
        "--availability",
        "report Available and Progressing on installed Instances from their Deployments' and Pods' real state",
        false,
      )
      .option("--health-port <port>", "serve /healthz, /readyz and /metrics over HTTP on this port (default: off)")
      .option("--health-host <addr>", "address the health and metrics server listens on", "127.0.0.1")
      .option(
        "--leader-elect-identity <id>",
        "this replica's name in the leader Lease (default: $POD_NAME, else <host name>-<pid>)",
      ),
  );
  addImageAccessOptions(run).action(async (o: CALib.ClusterRunFlags & ImageAccessFlags) => {
    const running = await CA.clusterRunAction(
      o,
      async () => {
        const pull = await imageAccessFrom(o);
        delete pull.onProgress;
        return pull;
      },
      () => {
        // a new process campaigns again (the Pod restarts); this one's informers cannot start again
        process.stderr.write(`${new Date().toISOString()} lost the leader lease: exiting\n`);
        process.exit(1);
      },
    );
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    // a second signal, or work still running 10 s later, ends the process at once
    const force = () => process.exit(process.exitCode ?? 0);
    process.once("SIGINT", force);
    process.once("SIGTERM", force);
    const grace = setTimeout(() => {
      process.stderr.write(`${new Date().toISOString()} still stopping after 10 s; exiting\n`);
      force();
    }, 10_000);
    grace.unref();
    await running.stop();
    process.stderr.write(`${new Date().toISOString()} stopped\n`);
    process.exit(process.exitCode ?? 0);
  });
  registerInstanceCommands(
    instance.description("List, describe and approve RukPak Instances (also the kubectl plugin `kubectl instance`)"),
  );
}

function registerInstanceCommands(inst: Command): void {
  kubeOptions(inst.command("list").description("List Instances with their bundles and conditions"))
    .addOption(new Option("-o, --output <format>", "text or json").choices(["text", "json"]).default("text"))
    .action(async (o: KubeFlags & { output: string }) => {
      const { items, rows } = await CA.instanceListAction(o);
      if (o.output === "json") {
        process.stdout.write(JSON.stringify(items, null, 2) + "\n");
        return;
      }
      const w = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
      for (const r of rows)
        process.stdout.write(
          r
            .map((x, c) => x.padEnd(w[c]))
            .join("  ")
            .trimEnd() + "\n",
        );
    });

  addImageAccessOptions(
    kubeOptions(
      inst
        .command("describe")
        .argument("<name>", "name of the Instance")
        .description(
          "Show an Instance: its bundle, conditions, and what the controllers unpacked and installed; " +
            "--pull also lists what it would create and which permissions it grants",
        )
        .option(
          "--pull",
          "unpack the bundle here (with the image access flags) to list the objects and permissions",
          false,
        ),
    ),
  ).action(async (name: string, o: KubeFlags & ImageAccessFlags & { pull: boolean }) => {
    const lines = await CA.instanceDescribeAction(o, name, () => imageAccessFrom(o), { pull: o.pull });
    process.stdout.write(lines.join("\n") + "\n");
  });

  addImageAccessOptions(
    kubeOptions(
      inst
        .command("approve")
        .argument("<name>", "name of the Instance")
        .description(
          "Approve an Instance that waits for approval (needs the `approve` " +
            "verb on it); --show prints what it would create and grant first",
        )
        .option("--show", "print the objects and permissions before approving", false)
        .option("--deny", "record a denial instead", false),
    ),
  ).action(async (name: string, o: KubeFlags & ImageAccessFlags & { show: boolean; deny: boolean }) => {
    const done = await CA.instanceApproveAction(o, name, {
      show: o.show,
      deny: o.deny,
      access: () => imageAccessFrom(o),
      onShow: (line) => process.stdout.write(`${line}\n`),
    });
    process.stdout.write(
      `instance.rukpak.io/${name} ${o.deny ? "denied" : "approved"} (generation ${done.generation})\n`,
    );
  });
}
