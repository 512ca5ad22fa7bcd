/**
 * What `opcat cluster manifests` prints: everything needed to run opcat's controllers in a cluster
 * (namespace, CRDs, default ProvisionerClasses, RBAC, a Deployment of two replicas with probes and a
 * restricted security context, a PodDisruptionBudget, Services for the webhooks, catalogd's HTTP API and
 * the metrics, the webhook configurations, and registries.conf as a ConfigMap when given), or with
 * `local` only the APIs and default classes (for `opcat cluster run` outside the cluster). The webhook
 * configurations come without a CA: they fail closed from the moment they are applied, until the first
 * replica starts and registers the CA it made (kept in the Secret opcat-webhook-cert, shared by replicas).
 */
import type { JsonObject } from "../gojson/value.js";
import type { KubeObject } from "./kube/client.js";
import { DEFAULT_IMAGE, DEFAULT_NAMESPACE, LEADER_LABEL } from "./kube/names.js";
import { defaultProvisionerClasses, GROUP, rukpakCrdObjects } from "./rukpak/api.js";
import { clusterCatalogCrdObject } from "./catalogd/api.js";
import { defaultInputClasses, inputClassCrd, inputCrd, resolvesetProvisionerClass } from "./deppy/api.js";
import { operatorCrd } from "./operators/api.js";
import { crdObject } from "./kube/schema.js";
import { webhookConfigurations } from "./rukpak/webhook.js";
import { olmAdmissionPolicies, olmCrdObjects } from "./olm/api.js";
import { clusterExtensionProvisionerClass } from "./olm/extension.js";

export interface ManifestOptions {
  local?: boolean;
  /**
   * Only the CustomResourceDefinitions (any other option aside): applied and established first, they
   * let kubectl map the objects of their kinds (ProvisionerClasses, InputClasses) that the rest holds.
   */
  crdsOnly?: boolean;
  namespace?: string;
  /** The image that runs `opcat cluster run` (`opcat cluster image` builds one). */
  image?: string;
  /** registries.conf text (mirrors, insecure registries) for the controllers' pulls: a ConfigMap. */
  registriesConf?: string;
}

/** Ports of the controller container. */
export const PORTS = { webhook: 9443, health: 8080, catalogs: 8081 } as const;
export const REGISTRIES_CONF_MAP = "opcat-registries-conf";

export { DEFAULT_IMAGE, DEFAULT_NAMESPACE };

export function clusterManifests(opts: ManifestOptions = {}): KubeObject[] {
  if (opts.crdsOnly) return apiObjects().filter((o) => o.kind === "CustomResourceDefinition");
  if (opts.local) return [...apiObjects(), ...userRoles()];
  const ns = opts.namespace ?? DEFAULT_NAMESPACE;
  const labels = { "app.kubernetes.io/name": "opcat-rukpak", "app.kubernetes.io/part-of": "opcat" };
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels } },
    ...apiObjects(),
    ...userRoles(),
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "opcat-rukpak", namespace: ns, labels } },
    // The provisioner installs operators, whose RBAC it must be able to grant: it needs cluster-admin rights.
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "opcat-rukpak", labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: "opcat-rukpak", namespace: ns }],
    },
    ...(opts.registriesConf !== undefined
      ? [
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: REGISTRIES_CONF_MAP, namespace: ns, labels },
            data: { "registries.conf": opts.registriesConf },
          } as KubeObject,
        ]
      : []),
    controllerDeployment(opts, ns, labels),
    ...controllerServices(ns, labels),
    ...webhookConfigurations({ service: { namespace: ns, name: "opcat-rukpak-webhook", port: 443 } }, ""),
  ];
}

/**
 * The CRDs that come with the Deppy controllers (installed unless `deppy: false`, see run.ts), in this order:
 * catalogd's ClusterCatalog, deppy.io's Input and InputClass, and the Operator.
 */
export function deppyCrdObjects(): KubeObject[] {
  return [
    clusterCatalogCrdObject(),
    ...[inputCrd, inputClassCrd, operatorCrd].map((d) => crdObject(d) as unknown as KubeObject),
  ];
}

/** The APIs (CRDs, admission policies) and their default classes. */
function apiObjects(): KubeObject[] {
  return [
    ...rukpakCrdObjects(),
    ...deppyCrdObjects(),
    ...olmCrdObjects(),
    ...defaultProvisionerClasses(),
    resolvesetProvisionerClass(),
    clusterExtensionProvisionerClass(),
    ...olmAdmissionPolicies(),
    ...defaultInputClasses(),
  ];
}

/** The ClusterRoles an admin grants users: approvers, and users of provisioner classes. */
function userRoles(): KubeObject[] {
  return [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "rukpak-approver", labels: { "app.kubernetes.io/part-of": "opcat" } },
      rules: [
        { apiGroups: [GROUP], resources: ["instances"], verbs: ["get", "list", "watch", "approve"] },
        { apiGroups: [GROUP], resources: ["instances/status"], verbs: ["get", "update", "patch"] },
        // an approval names the Bundle and its content digest
        { apiGroups: [GROUP], resources: ["bundles"], verbs: ["get", "list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "rukpak-class-user", labels: { "app.kubernetes.io/part-of": "opcat" } },
      rules: [{ apiGroups: [GROUP], resources: ["provisionerclasses"], verbs: ["get", "list", "watch", "use"] }],
    },
  ];
}

/** Two replicas of the controller, spread over nodes, with a restricted security context. */
function controllerDeployment(opts: ManifestOptions, ns: string, labels: Record<string, string>): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "opcat-rukpak", namespace: ns, labels },
    spec: {
      replicas: 2,
      selector: { matchLabels: { "app.kubernetes.io/name": "opcat-rukpak" } },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: "opcat-rukpak",
          terminationGracePeriodSeconds: 15,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 65532,
            runAsGroup: 65532,
            seccompProfile: { type: "RuntimeDefault" },
          },
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: {
                    topologyKey: "kubernetes.io/hostname",
                    labelSelector: { matchLabels: { "app.kubernetes.io/name": "opcat-rukpak" } },
                  },
                },
              ],
            },
          },
          containers: [controllerContainer(opts, ns)],
          volumes: [
            { name: "cache", emptyDir: {} },
            { name: "tmp", emptyDir: {} },
            ...(opts.registriesConf !== undefined
              ? [{ name: "registries-conf", configMap: { name: REGISTRIES_CONF_MAP } }]
              : []),
          ],
        },
      },
    },
  };
}

/** The controller container: `opcat cluster run` with the webhooks, probes, catalogd and metrics ports. */
function controllerContainer(opts: ManifestOptions, ns: string): JsonObject {
  return {
    name: "controller",
    image: opts.image ?? DEFAULT_IMAGE,
    args: [
      "cluster",
      "run",
      "--webhook-host=0.0.0.0",
      `--webhook-port=${PORTS.webhook}`,
      `--webhook-service=${ns}/opcat-rukpak-webhook:443`,
      `--leader-elect-namespace=${ns}`,
      `--namespace=${ns}`,
      "--state-dir=/var/cache/opcat",
      "--health-host=0.0.0.0",
      `--health-port=${PORTS.health}`,
      "--catalog-host=0.0.0.0",
      `--catalog-port=${PORTS.catalogs}`,
      `--catalog-advertise=opcat-catalogd.${ns}.svc`,
      "--availability",
      ...(opts.registriesConf !== undefined ? ["--registries-conf=/etc/opcat/registries.conf"] : []),
    ],
    env: [
      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
    ],
    ports: [
      { name: "webhook", containerPort: PORTS.webhook },
      { name: "health", containerPort: PORTS.health },
      { name: "catalogs", containerPort: PORTS.catalogs },
    ],
    readinessProbe: { httpGet: { path: "/readyz", port: "health" }, periodSeconds: 5 },
    livenessProbe: {
      httpGet: { path: "/healthz", port: "health" },
      initialDelaySeconds: 10,
      periodSeconds: 10,
      failureThreshold: 6,
    },
    volumeMounts: [
      { name: "cache", mountPath: "/var/cache/opcat" },
      { name: "tmp", mountPath: "/tmp" },
      ...(opts.registriesConf !== undefined
        ? [{ name: "registries-conf", mountPath: "/etc/opcat", readOnly: true }]
        : []),
    ],
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      readOnlyRootFilesystem: true,
    },
    resources: { requests: { cpu: "50m", memory: "192Mi" }, limits: { memory: "1Gi" } },
  };
}

/** The PodDisruptionBudget and the Services: webhooks, catalogd's HTTP API, metrics. */
function controllerServices(ns: string, labels: Record<string, string>): KubeObject[] {
  return [
    {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "opcat-rukpak", namespace: ns, labels },
      spec: { minAvailable: 1, selector: { matchLabels: { "app.kubernetes.io/name": "opcat-rukpak" } } },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "opcat-rukpak-webhook", namespace: ns, labels },
      spec: {
        selector: { "app.kubernetes.io/name": "opcat-rukpak" },
        ports: [{ name: "webhook", port: 443, targetPort: PORTS.webhook }],
      },
    },
    // catalogd's HTTP API, over HTTPS (the webhooks' certificate covers its names) on 443 as catalogd's:
    // only the leader serves catalogs, and it labels its Pod as the leader
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "opcat-catalogd", namespace: ns, labels },
      spec: {
        selector: { "app.kubernetes.io/name": "opcat-rukpak", [LEADER_LABEL]: "true" },
        ports: [{ name: "https", port: 443, targetPort: PORTS.catalogs }],
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "opcat-metrics", namespace: ns, labels },
      spec: {
        selector: { "app.kubernetes.io/name": "opcat-rukpak" },
        ports: [{ name: "metrics", port: 8080, targetPort: PORTS.health }],
      },
    },
  ];
}
