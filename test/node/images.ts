/**
 * Images the node tests run, built by opcat in the test (no image comes from the internet) and pushed
 * to the node's registry (OPCAT_TEST_REGISTRY, plain HTTP on the node's bridge): busybox's httpd from
 * the machine's busybox-static, and opcat's own image (`opcat cluster image`).
 */
import { existsSync, readFileSync } from "node:fs";
import { assembleImage, buildOpcatImage, pushImage, type BuiltImage } from "../../src/image/index.js";
import { REPO_ROOT } from "../shared.js";

export const BUSYBOX = "/bin/busybox";

/** busybox (static) serving /www with httpd on port 8080 as uid 65532; index.html says `text`. */
export function busyboxImage(text: string): BuiltImage {
  if (!existsSync(BUSYBOX)) throw new Error(`${BUSYBOX} is missing (Debian: busybox-static)`);
  return assembleImage(
    [
      { path: "bin", type: "dir" },
      { path: "bin/busybox", type: "file", data: readFileSync(BUSYBOX), mode: 0o755 },
      { path: "www", type: "dir" },
      { path: "www/index.html", type: "file", data: Buffer.from(text) },
    ],
    {},
    {
      run: {
        Entrypoint: ["/bin/busybox"],
        Cmd: ["httpd", "-f", "-p", "8080", "-h", "/www"],
        User: "65532:65532",
      },
    },
  );
}

let opcat: Promise<{ ref: string; image: BuiltImage & { nodeVersion: string } }> | undefined;

/** opcat's image built from this checkout (dist/ and node_modules) and pushed once per process. */
export function opcatImage(registry: string): Promise<{ ref: string; image: BuiltImage & { nodeVersion: string } }> {
  opcat ??= (async () => {
    const image = buildOpcatImage({ packageDir: REPO_ROOT });
    const ref = await pushImage(image, `${registry}/opcat:test`, { useHttp: true });
    return { ref, image };
  })();
  return opcat;
}

/** Pushes `img` as `<registry>/<name>`; returns `name@digest`. */
export function push(img: BuiltImage, registry: string, name: string): Promise<string> {
  return pushImage(img, `${registry}/${name}`, { useHttp: true });
}
