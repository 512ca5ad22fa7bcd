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

/**
 * A validating admission webhook server in Node (the runtime of opcat's image): HTTPS on `port` with
 * `tls.crt`/`tls.key` from `certDir`, refusing every request it is sent with a message naming its Pod.
 */
export function refusingWebhookScript(certDir: string, port: number): string {
  return [
    `const fs = require("fs"); const d = ${JSON.stringify(certDir)};`,
    'const o = { cert: fs.readFileSync(d + "tls.crt"), key: fs.readFileSync(d + "tls.key") };',
    'require("https").createServer(o, (req, res) => { let b = ""; req.on("data", (c) => (b += c));',
    '  req.on("end", () => { const r = JSON.parse(b).request; res.setHeader("content-type", "application/json");',
    '    res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: {',
    '      uid: r.uid, allowed: false, status: { code: 403, message: "refused by " + process.env.POD_NAME } } }));',
    `  }); }).listen(${port});`,
  ].join("\n");
}
