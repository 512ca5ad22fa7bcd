/**
 * Small registry+v1 bundles built in memory for the unit tests of the renderer
 * (src/cluster/rukpak/render): package "pkg", CSV "pkg.v1.0.0" with the spec given, then the other
 * manifests given.
 */
import type { BundleManifest, RegistryBundle } from "../../src/bundle/index.js";

type JsonObj = Record<string, unknown>;

export function manifest(object: JsonObj): BundleManifest {
  const meta = object.metadata as { name?: string } | undefined;
  return {
    file: `manifests/${meta?.name ?? "x"}.yaml`,
    object: object as BundleManifest["object"],
    kind: String(object.kind),
    apiVersion: String(object.apiVersion),
    json: JSON.stringify(object),
  };
}

export function bundle(spec: JsonObj, objects: JsonObj[] = [], pkg = "pkg", annotations?: JsonObj): RegistryBundle {
  const csv = manifest({
    apiVersion: "operators.coreos.com/v1alpha1",
    kind: "ClusterServiceVersion",
    metadata: { name: "pkg.v1.0.0", ...(annotations ? { annotations } : {}) },
    spec,
  });
  return {
    name: "pkg.v1.0.0",
    package: pkg,
    csv,
    objects: [csv, ...objects.map(manifest)],
  } as unknown as RegistryBundle;
}

export const crd = (name: string, spec: JsonObj = {}): JsonObj => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name },
  spec,
});

/** `installModes` with the given ones supported, the others not. */
export const modes = (...supported: string[]) =>
  ["AllNamespaces", "OwnNamespace", "SingleNamespace", "MultiNamespace"].map((type) => ({
    type,
    supported: supported.includes(type),
  }));

/** The install strategy with deployment specs of these names. */
export const deployments = (...names: unknown[]) => ({
  install: { spec: { deployments: names.map((name) => ({ name })) } },
});

/** `customresourcedefinitions.owned` of these names. */
export const owned = (...names: string[]) => ({
  customresourcedefinitions: { owned: names.map((name) => ({ name })) },
});
