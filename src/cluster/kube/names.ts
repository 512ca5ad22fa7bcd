/** Where `opcat cluster manifests` puts opcat by default. */
export const DEFAULT_NAMESPACE = "opcat-system";
export const DEFAULT_IMAGE = "quay.io/opcat/opcat:latest";
/** The label the leading replica puts on its own Pod (the catalogd Service selects it). */
export const LEADER_LABEL = "opcat.io/leader";
