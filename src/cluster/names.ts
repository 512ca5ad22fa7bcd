/** Where `opcat cluster manifests` puts opcat by default. */
export const DEFAULT_NAMESPACE = "opcat-system";
export const DEFAULT_IMAGE = "quay.io/opcat/opcat:latest";
