/**
 * `opcat cluster manifests|run` and `opcat instance list|describe|approve` (also shipped as the
 * kubectl plugin `kubectl-instance`): flags → src/cluster → print.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Command, Option } from "commander";
import type { KubeClient, KubeObject } from "../cluster/client.js";
import type * as COLib from "../cluster/conditions.js";
import { DEFAULT_NAMESPACE } from "../cluster/names.js";
import type * as CMLib from "../cluster/manifests.js";
import type { Instance } from "../cluster/rukpak/api.js";
import type * as RALib from "../cluster/rukpak/api.js";
import type * as APLib from "../cluster/rukpak/approve.js";
import type * as PMLib from "../cluster/rukpak/permissions.js";

// The Kubernetes client (@kubernetes/client-node) and the controllers take most of a second to load:
// loaded when a cluster command runs, not for every opcat command.
const kube = () => import("../cluster/client.js");
import { OpcatError } from "../errors/index.js";
import type { JsonValue } from "../yaml/index.js";
import type * as YLib from "../yaml/index.js";
import { addImageAccessOptions, imageAccessFrom, type ImageAccessFlags } from "./access.js";
import { loadOnAction } from "./lazy.js";

// Loaded when a cluster or instance command runs (see loadOnAction below).
let CM: typeof CMLib;
let AP: typeof APLib;
let PM: typeof PMLib;
let Y: typeof YLib;
let IM: typeof IMLib;
let RA: typeof RALib;
let CO: typeof COLib;
import type * as IMLib from "../image/index.js";

interface KubeFlags {
  kubeconfig?: string;
  context?: string;
}

function kubeOptions(cmd: Command): Command {
  return cmd
    .option("--kubeconfig <file>", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
    .option("--context <name>", "kubeconfig context (default: its current context)");
}

async function connect(f: KubeFlags): Promise<KubeClient> {
  const { KubeClient } = await kube();
  try {
    return KubeClient.connect({ kubeconfig: f.kubeconfig, context: f.context });
  } catch (e) {
    throw new OpcatError("CLUSTER_KUBECONFIG", `cannot load the kubeconfig: ${(e as Error).message}`, {
      kind: "usage",
    });
  }
}

/** API errors as opcat errors: refusals (403/422/409) are exit 1 with the server's message, the rest exit 2. */
function apiFailure(e: unknown, what: string): never {
  if (e instanceof Error && e.name === "ApprovalError")
    throw new OpcatError("CLUSTER_APPROVAL", `${what}: ${e.message}`, { kind: "invalid" });
  if (e instanceof Error && e.name === "KubeApiError") {
    const k = e as Error & { status: number; reason: string };
    const invalid = k.status === 403 || k.status === 422 || k.status === 409 || k.status === 404;
    throw new OpcatError(`CLUSTER_${k.reason.toUpperCase() || k.status}`, `${what}: ${k.message}`, {
      kind: invalid ? "invalid" : "usage",
    });
  }
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "ETIMEDOUT" || code === "ECONNRESET") {
    throw new OpcatError("CLUSTER_UNREACHABLE", `${what}: the API server cannot be reached (${code})`, {
      kind: "usage",
    });
  }
  throw e;
}

function printObjects(objs: KubeObject[], format: string): void {
  if (format === "json")
    process.stdout.write(JSON.stringify({ apiVersion: "v1", kind: "List", items: objs }, null, 2) + "\n");
  else process.stdout.write(objs.map((o) => Y.toGoYaml(o as unknown as JsonValue)).join("---\n"));
}

export function registerClusterCommands(program: Command): void {
  const cluster = program.command("cluster");
  const instance = program.command("instance");
  loadOnAction([cluster, instance], async () => {
    [CM, AP, PM, Y, IM, RA, CO] = await Promise.all([
      import("../cluster/manifests.js"),
      import("../cluster/rukpak/approve.js"),
      import("../cluster/rukpak/permissions.js"),
      import("../yaml/index.js"),
      import("../image/index.js"),
      import("../cluster/rukpak/api.js"),
      import("../cluster/conditions.js"),
    ]);
  });
  cluster.description("Run opcat's RukPak provisioners on a Kubernetes cluster (Bundle, Instance, ProvisionerClass)");
  cluster
    .command("manifests")
    .description(
      "Print what running opcat in a cluster needs (CRDs, default ProvisionerClasses, " +
        "RBAC, Deployment, Service); --local: only the APIs and classes",
    )
    .option(
      "--local",
      "only the APIs, default classes and user roles (for `opcat cluster run` outside the cluster)",
      false,
    )
    .option("--namespace <ns>", "namespace of the controller", DEFAULT_NAMESPACE)
    .option("--image <ref>", "image that runs `opcat cluster run` (build one with `opcat cluster image`)")
    .option(
      "--registries-conf <file>",
      "registries.conf (mirrors, insecure registries) for the controllers' pulls, shipped as a ConfigMap",
    )
    .addOption(new Option("-o, --output <format>", "yaml or json").choices(["yaml", "json"]).default("yaml"))
    .action((o: { local: boolean; namespace: string; image?: string; output: string; registriesConf?: string }) => {
      let registriesConf: string | undefined;
      if (o.registriesConf !== undefined) {
        try {
          registriesConf = readFileSync(o.registriesConf, "utf8");
        } catch (e) {
          throw new OpcatError(
            "USAGE_REGISTRIES_CONF",
            `--registries-conf ${o.registriesConf}: ${(e as Error).message}`,
            { kind: "usage" },
          );
        }
      }
      printObjects(
        CM.clusterManifests({ local: o.local, namespace: o.namespace, image: o.image, registriesConf }),
        o.output,
      );
    });

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
    if (o.push && o.tag.startsWith("oci:"))
      throw new OpcatError("USAGE_PUSH_OCI", `--push with --tag ${o.tag}: an oci: layout is written locally`, {
        kind: "usage",
      });
    const img = IM.buildOpcatImage({ nodeBinary: o.nodeBinary });
    const access = await imageAccessFrom(o, "pushing");
    const where = await IM.outputImage(img, o.tag, { ...access, push: o.push });
    const size = img.layer.length + img.config.length + img.manifest.length;
    process.stderr.write(`opcat image (${img.nodeVersion}): ${(size / 1048576).toFixed(1)} MiB compressed\n`);
    process.stdout.write(`${where}\n`);
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
  addImageAccessOptions(run).action(
    async (
      o: KubeFlags &
        ImageAccessFlags & {
          stateDir?: string;
          webhookName: string;
          webhookHost: string;
          webhookPort: string;
          webhookService?: string;
          webhooks: boolean;
          install: boolean;
          leaderElectNamespace?: string;
          deppy: boolean;
          namespace: string;
          catalogHost: string;
          catalogPort: string;
          resolutionBudget: string;
          healthPort?: string;
          healthHost: string;
          availability: boolean;
          catalogAdvertise?: string;
          leaderElectIdentity?: string;
        },
    ) => {
      const budget = Number(o.resolutionBudget);
      if (!(budget > 0))
        throw new OpcatError(
          "USAGE_RESOLUTION_BUDGET",
          `--resolution-budget ${o.resolutionBudget}: expected a positive number of seconds`,
          { kind: "usage" },
        );
      let service: { namespace: string; name: string; port: number } | undefined;
      if (o.webhookService) {
        const m = /^([^/]+)\/([^:]+):(\d+)$/.exec(o.webhookService);
        if (!m)
          throw new OpcatError(
            "USAGE_WEBHOOK_SERVICE",
            `--webhook-service ${JSON.stringify(o.webhookService)}: expected <namespace>/<name>:<port>`,
            { kind: "usage" },
          );
        service = { namespace: m[1], name: m[2], port: Number(m[3]) };
      }
      const port = Number(o.webhookPort);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new OpcatError("USAGE_WEBHOOK_PORT", `--webhook-port ${o.webhookPort}: not a port`, {
          kind: "usage",
        });
      const catalogPort = Number(o.catalogPort);
      if (!Number.isInteger(catalogPort) || catalogPort < 0 || catalogPort > 65535)
        throw new OpcatError("USAGE_CATALOG_PORT", `--catalog-port ${o.catalogPort}: not a port`, {
          kind: "usage",
        });
      const healthPort = o.healthPort === undefined ? undefined : Number(o.healthPort);
      if (healthPort !== undefined && (!Number.isInteger(healthPort) || healthPort < 0 || healthPort > 65535))
        throw new OpcatError("USAGE_HEALTH_PORT", `--health-port ${o.healthPort}: not a port`, { kind: "usage" });
      const pull = await imageAccessFrom(o);
      delete pull.onProgress;
      const { runControllers } = await import("../cluster/run.js");
      const running = await runControllers({
        kubeconfig: o.kubeconfig,
        context: o.context,
        stateDir: o.stateDir ?? join(o.cacheDir ?? IM.defaultCacheDir(), "cluster"),
        pull,
        installApis: o.install,
        webhooks: o.webhooks,
        webhookHost: o.webhookHost,
        webhookPort: port,
        webhookService: service,
        webhookName: o.webhookName,
        leaderElectionNamespace: o.leaderElectNamespace,
        deppy: o.deppy,
        namespace: o.namespace,
        catalogHost: o.catalogHost,
        catalogPort,
        resolutionBudgetMs: budget * 1000,
        healthPort,
        healthHost: o.healthHost,
        availability: o.availability,
        catalogAdvertise: o.catalogAdvertise,
        identity: o.leaderElectIdentity ?? process.env.POD_NAME,
      }).catch((e) => apiFailure(e, "starting the controllers"));
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
    },
  );
  registerInstanceCommands(
    instance.description("List, describe and approve RukPak Instances (also the kubectl plugin `kubectl instance`)"),
  );
}

function condText(i: Instance, type: string): string {
  const c = CO.findCondition(i.status?.conditions, type);
  return c ? `${c.status}${c.reason ? ` (${c.reason})` : ""}` : "-";
}

/**
 * The objects the Instance's bundle becomes (unpacked here with
 * the user's own access) and the permissions they grant.
 */
async function preview(
  client: KubeClient,
  inst: Instance,
  flags: ImageAccessFlags,
): Promise<import("../cluster/rukpak/preview.js").InstancePreview> {
  const { previewInstance } = await import("../cluster/rukpak/preview.js");
  return previewInstance(client, inst, await imageAccessFrom(flags));
}

function registerInstanceCommands(inst: Command): void {
  kubeOptions(inst.command("list").description("List Instances with their bundles and conditions"))
    .addOption(new Option("-o, --output <format>", "text or json").choices(["text", "json"]).default("text"))
    .action(async (o: KubeFlags & { output: string }) => {
      const client = await connect(o);
      try {
        const { items } = await client
          .list<Instance>(RA.API_VERSION, "Instance")
          .catch((e) => apiFailure(e, "listing Instances"));
        if (o.output === "json") {
          process.stdout.write(JSON.stringify(items, null, 2) + "\n");
          return;
        }
        const rows = [
          ["NAME", "BUNDLE", "ACTIVE", "APPROVED", "INSTALLED"],
          ...items.map((i) => [
            i.metadata.name,
            i.spec.bundle.name,
            i.status?.activeBundle ?? "-",
            condText(i, "Approved"),
            condText(i, "Installed"),
          ]),
        ];
        const w = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
        for (const r of rows)
          process.stdout.write(
            r
              .map((x, c) => x.padEnd(w[c]))
              .join("  ")
              .trimEnd() + "\n",
          );
      } finally {
        client.close();
      }
    });

  addImageAccessOptions(
    kubeOptions(
      inst
        .command("describe")
        .argument("<name>")
        .description(
          "Show an Instance: its bundle, conditions, and what it would create and which permissions it grants",
        ),
    ),
  ).action(async (name: string, o: KubeFlags & ImageAccessFlags) => {
    const client = await connect(o);
    try {
      const i = await client
        .get<Instance>(RA.API_VERSION, "Instance", name)
        .catch((e) => apiFailure(e, `reading Instance ${name}`));
      const out: string[] = [
        `Name:          ${name}`,
        `Bundle:        ${i.spec.bundle.name}`,
        `Active bundle: ${i.status?.activeBundle ?? "-"}`,
      ];
      if (i.spec.bundle.spec)
        out.push(`Class:         ${i.spec.bundle.spec.class}`, `Refs:          ${i.spec.bundle.spec.refs.join(", ")}`);
      out.push("Conditions:");
      for (const c of i.status?.conditions ?? []) out.push(`  ${c.type}=${c.status} ${c.reason}: ${c.message}`);
      const p = await preview(client, i, o);
      if (p.error) out.push(`Would create:  (cannot tell: ${p.error})`);
      else {
        out.push(`Would create (${p.objects.length} objects):`);
        for (const x of p.objects)
          out.push(`  ${x.kind} ${x.metadata.namespace ? `${x.metadata.namespace}/` : ""}${x.metadata.name}`);
        const rules = p.rules;
        out.push(`Permissions granted (${rules.length} rules):`);
        for (const r of rules) out.push(`  ${PM.formatRule(r)}`);
      }
      process.stdout.write(out.join("\n") + "\n");
    } finally {
      client.close();
    }
  });

  addImageAccessOptions(
    kubeOptions(
      inst
        .command("approve")
        .argument("<name>")
        .description(
          "Approve an Instance that waits for approval (needs the `approve` " +
            "verb on it); --show prints what it would create and grant first",
        )
        .option("--show", "print the objects and permissions before approving", false)
        .option("--deny", "record a denial instead", false),
    ),
  ).action(async (name: string, o: KubeFlags & ImageAccessFlags & { show: boolean; deny: boolean }) => {
    const client = await connect(o);
    try {
      let reviewed: string | undefined;
      if (o.show) {
        const i = await client
          .get<Instance>(RA.API_VERSION, "Instance", name)
          .catch((e) => apiFailure(e, `reading Instance ${name}`));
        if (i.status?.permissions) {
          // a resolveset Instance (approval: Android): the permissions its bundles add to what is installed
          if (i.status.permissions.length === 0) process.stdout.write("new permissions: none\n");
          for (const p of i.status.permissions) process.stdout.write(`new permission: ${p}\n`);
        } else {
          const p = await preview(client, i, o);
          if (p.error) process.stdout.write(`cannot show the content: ${p.error}\n`);
          else {
            for (const r of p.rules) process.stdout.write(`grants: ${PM.formatRule(r)}\n`);
            reviewed = p.digest;
          }
        }
      }
      const done = await AP.approveInstance(client, name, { deny: o.deny, digest: reviewed }).catch((e) =>
        apiFailure(e, `${o.deny ? "denying" : "approving"} Instance ${name}`),
      );
      process.stdout.write(
        `instance.rukpak.io/${name} ${o.deny ? "denied" : "approved"} (generation ${done.metadata.generation})\n`,
      );
    } finally {
      client.close();
    }
  });
}
