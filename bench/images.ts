/**
 * Image benchmark (not a test): pushes N bundle images built from the community bundle directories
 * to a local docker-registry on 127.0.0.1, pulls and renders them cold (empty cache) and warm (by
 * digest, from the cache), then renders every bundle directory under shared/data/community/operators.
 * Prints images/s, bundles/s, MB/s and peak RSS.
 *
 *     node --import tsx bench/images.ts [N=40]
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isBundleDirectory, renderBundleDirectory } from "../src/bundle/index.js";
import { buildBundleImage, mapPool, pushImage, renderReference, RegistryClient } from "../src/image/index.js";
import { COMMUNITY } from "../test/shared.js";
import { requireTools, startDockerRegistry } from "../test/image/servers.js";

const N = Number(process.argv[2] ?? 40);
let peakRss = 0;
const sample = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);

function bundleDirs(): string[] {
  const root = join(COMMUNITY, "operators");
  const out: string[] = [];
  for (const op of readdirSync(root).sort()) {
    const d = join(root, op);
    if (!statSync(d).isDirectory()) continue;
    for (const v of readdirSync(d).sort()) {
      const b = join(d, v);
      if (statSync(b).isDirectory() && isBundleDirectory(b)) out.push(b);
    }
  }
  return out;
}

function dirBytes(d: string): number {
  let n = 0;
  for (const e of readdirSync(d, { withFileTypes: true, recursive: true }))
    if (e.isFile()) n += statSync(join(e.parentPath, e.name)).size;
  return n;
}

const dirs = bundleDirs();
const ok: string[] = [];
let bytes = 0;
let t0 = performance.now();
for (const d of dirs) {
  try {
    renderBundleDirectory(d);
    ok.push(d);
    bytes += dirBytes(d);
  } catch {
    // bundles opm cannot render either
  }
}
let s = (performance.now() - t0) / 1000;
console.log(
  `render bundle directories: ${ok.length}/${dirs.length} bundles in ${s.toFixed(2)} ` +
    `s = ${(ok.length / s).toFixed(0)} bundles/s, ${(bytes / 1e6 / s).toFixed(1)} MB/s`,
);

const missing = requireTools("docker-registry");
if (missing) {
  console.log(`registry benchmark skipped: ${missing}`);
} else {
  const work = mkdtempSync(join(tmpdir(), "opcat-bench-images-"));
  const reg = await startDockerRegistry(join(work, "reg"));
  try {
    const client = new RegistryClient({ useHttp: true });
    const picked = ok.slice(0, N);
    const refs = await mapPool(picked, 4, async (d, i) => {
      const img = buildBundleImage(d);
      const pushed = await pushImage(img, `${reg.host}/bench/b${i}:v1`, { client });
      return { tag: `${reg.host}/bench/b${i}:v1`, digest: pushed };
    });
    client.close();
    const cache = join(work, "cache");
    t0 = performance.now();
    await mapPool(refs, 4, (r) => renderReference(r.tag, { useHttp: true, cacheDir: cache }));
    s = (performance.now() - t0) / 1000;
    console.log(
      `pull+unpack+render cold (by tag): ${refs.length} images in ` +
        `${s.toFixed(2)} s = ${(refs.length / s).toFixed(1)} images/s`,
    );
    t0 = performance.now();
    await mapPool(refs, 4, (r) => renderReference(r.digest, { useHttp: true, cacheDir: cache }));
    s = (performance.now() - t0) / 1000;
    console.log(
      `render warm (by digest, cache only): ${refs.length} images in ` +
        `${s.toFixed(2)} s = ${(refs.length / s).toFixed(1)} images/s`,
    );
  } finally {
    await reg.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
clearInterval(sample);
console.log(`peak RSS: ${(peakRss / 1048576).toFixed(0)} MiB`);
