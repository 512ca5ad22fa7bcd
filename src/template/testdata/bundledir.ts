/**
 * Test fixture: minimal registry+v1 bundle directories (a CSV with a deployment, and
 * metadata/annotations.yaml), for building bundle images in tests.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Writes a minimal registry+v1 bundle directory for `<pkg>.v<version>` (CSV `description` optional); returns `dir`. */
export function writeBundleDir(
  dir: string,
  pkg: string,
  version: string,
  extra: { description?: string } = {},
): string {
  mkdirSync(join(dir, "manifests"), { recursive: true });
  mkdirSync(join(dir, "metadata"), { recursive: true });
  const name = `${pkg}.v${version}`;
  writeFileSync(
    join(dir, "manifests", `${pkg}.clusterserviceversion.yaml`),
    [
      "apiVersion: operators.coreos.com/v1alpha1",
      "kind: ClusterServiceVersion",
      "metadata:",
      `  name: ${name}`,
      "  annotations:",
      `    containerImage: quay.io/example/${pkg}:v${version}`,
      "spec:",
      `  version: ${version}`,
      `  displayName: ${pkg}`,
      ...(extra.description ? [`  description: ${JSON.stringify(extra.description)}`] : []),
      "  install:",
      "    strategy: deployment",
      "    spec:",
      "      deployments:",
      `      - name: ${pkg}`,
      "        spec:",
      "          template:",
      "            spec:",
      "              containers:",
      "              - name: manager",
      `                image: quay.io/example/${pkg}:v${version}`,
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "metadata", "annotations.yaml"),
    `annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n` +
      `  operators.operatorframework.io.bundle.manifests.v1: manifests/\n` +
      `  operators.operatorframework.io.bundle.metadata.v1: metadata/\n` +
      `  operators.operatorframework.io.bundle.package.v1: ${pkg}\n` +
      `  operators.operatorframework.io.bundle.channels.v1: stable\n`,
  );
  return dir;
}
