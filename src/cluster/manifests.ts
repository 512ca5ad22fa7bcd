/**
 * What `opcat cluster manifests` prints: everything needed to run opcat's controllers in a cluster
 * (namespace, CRDs, default ProvisionerClasses, RBAC, Deployment, Service, the webhook configurations),
 * or with `local` only the APIs and default classes (for `opcat cluster run` outside the cluster). The
 * webhook configurations come without a CA: they fail closed from the moment they are applied, until
 * the controller starts and writes the CA it made.
 */
import type { KubeObject } from "./client.js";
import { DEFAULT_IMAGE, DEFAULT_NAMESPACE } from "./names.js";
import { defaultProvisionerClasses, GROUP, rukpakCrdObjects } from "./rukpak/api.js";
import { defaultInputClasses, deppyCrdObjects, resolvesetProvisionerClass } from "./deppy/api.js";
import { webhookConfigurations } from "./rukpak/webhook.js";
import { olmAdmissionPolicies, olmCrdObjects } from "./olm/api.js";
import { clusterExtensionProvisionerClass } from "./olm/extension.js";

export interface ManifestOptions {
  local?: boolean;
  namespace?: string;
  /** The image that runs `opcat cluster run` (an image with Node 24 and opcat installed). */
  image?: string;
}

export { DEFAULT_IMAGE, DEFAULT_NAMESPACE };

export function clusterManifests(opts: ManifestOptions = {}): KubeObject[] {
  const apis: KubeObject[] = [
    ...rukpakCrdObjects(),
    ...deppyCrdObjects(),
    ...olmCrdObjects(),
    ...defaultProvisionerClasses(),
    resolvesetProvisionerClass(),
    clusterExtensionProvisionerClass(),
    ...olmAdmissionPolicies(),
    ...defaultInputClasses(),
  ];
  const userRoles: KubeObject[] = [
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
  if (opts.local) return [...apis, ...userRoles];
  const ns = opts.namespace ?? DEFAULT_NAMESPACE;
  const labels = { "app.kubernetes.io/name": "opcat-rukpak", "app.kubernetes.io/part-of": "opcat" };
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels } },
    ...apis,
    ...userRoles,
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "opcat-rukpak", namespace: ns, labels } },
    // The provisioner installs operators, whose RBAC it must be able to grant: it needs cluster-admin rights.
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "opcat-rukpak", labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: "opcat-rukpak", namespace: ns }],
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "opcat-rukpak", namespace: ns, labels },
      spec: {
        replicas: 2,
        selector: { matchLabels: { "app.kubernetes.io/name": "opcat-rukpak" } },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: "opcat-rukpak",
            securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
            containers: [
              {
                name: "controller",
                image: opts.image ?? DEFAULT_IMAGE,
                args: [
                  "cluster",
                  "run",
                  "--webhook-host=0.0.0.0",
                  "--webhook-port=9443",
                  `--webhook-service=${ns}/opcat-rukpak-webhook:443`,
                  `--leader-elect-namespace=${ns}`,
                  "--state-dir=/var/cache/opcat",
                ],
                ports: [{ name: "webhook", containerPort: 9443 }],
                volumeMounts: [{ name: "cache", mountPath: "/var/cache/opcat" }],
                securityContext: {
                  allowPrivilegeEscalation: false,
                  capabilities: { drop: ["ALL"] },
                  readOnlyRootFilesystem: true,
                },
                resources: { requests: { cpu: "50m", memory: "128Mi" } },
              },
            ],
            volumes: [{ name: "cache", emptyDir: {} }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "opcat-rukpak-webhook", namespace: ns, labels },
      spec: {
        selector: { "app.kubernetes.io/name": "opcat-rukpak" },
        ports: [{ name: "webhook", port: 443, targetPort: 9443 }],
      },
    },
    ...webhookConfigurations({ service: { namespace: ns, name: "opcat-rukpak-webhook", port: 443 } }, ""),
  ];
}
