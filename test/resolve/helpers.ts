/** Small catalogs for resolver tests, built from compact descriptions. */
import { loadText } from "../../src/fbc/load.js";
import { validateCatalog } from "../../src/fbc/validate.js";
import type { Input, NamedCatalog } from "../../src/resolve/index.js";

export interface B {
  name: string;
  version: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  /** Channels the bundle is in (default ["stable"]). */
  channels?: string[];
  provides?: string[]; // "group/version/kind"
  requires?: string[]; // gvk keys
  requiresPackage?: [string, string][]; // [package, range]
  constraints?: unknown[];
  extra?: { type: string; value: unknown }[];
  related?: string[];
}

export interface P {
  name: string;
  defaultChannel?: string;
  bundles: B[];
}

const gvk = (k: string) => {
  const [group, version, kind] = k.split("/");
  return { group, version, kind };
};

/** FBC JSON text for packages, followed by extra blobs (e.g. olm.operand entries). */
export function fbc(pkgs: P[], blobs: unknown[] = []): string {
  const out: unknown[] = [];
  for (const p of pkgs) {
    out.push({ schema: "olm.package", name: p.name, defaultChannel: p.defaultChannel ?? "stable" });
    const chans = new Map<string, unknown[]>();
    for (const b of p.bundles) {
      for (const c of b.channels ?? ["stable"]) {
        const e: Record<string, unknown> = { name: b.name };
        if (b.replaces) e.replaces = b.replaces;
        if (b.skips) e.skips = b.skips;
        if (b.skipRange) e.skipRange = b.skipRange;
        chans.set(c, [...(chans.get(c) ?? []), e]);
      }
    }
    for (const [c, entries] of chans) out.push({ schema: "olm.channel", package: p.name, name: c, entries });
    for (const b of p.bundles) {
      const props: unknown[] = [{ type: "olm.package", value: { packageName: p.name, version: b.version } }];
      for (const g of b.provides ?? []) props.push({ type: "olm.gvk", value: gvk(g) });
      for (const g of b.requires ?? []) props.push({ type: "olm.gvk.required", value: gvk(g) });
      for (const [pk, r] of b.requiresPackage ?? [])
        props.push({ type: "olm.package.required", value: { packageName: pk, versionRange: r } });
      for (const c of b.constraints ?? []) props.push({ type: "olm.constraint", value: c });
      props.push(...(b.extra ?? []));
      out.push({
        schema: "olm.bundle",
        package: p.name,
        name: b.name,
        image: `quay.io/test/${b.name}:bundle`,
        properties: props,
        relatedImages: (b.related ?? []).map((r, i) => ({ name: `img${i}`, image: r })),
      });
    }
  }
  out.push(...blobs);
  return out.map((o) => JSON.stringify(o)).join("\n");
}

/** A validated catalog (throws on problems), with its extra blobs as `others`. */
export function catalog(name: string, pkgs: P[], priority = 0, blobs: unknown[] = []): NamedCatalog {
  const loaded = loadText(fbc(pkgs, blobs), `${name}.json`);
  const v = validateCatalog(loaded.config);
  const problems = [...loaded.problems, ...v.problems];
  if (problems.length > 0) throw new Error(`${name}: ${problems.map((p) => p.message).join("; ")}`);
  return { name, priority, model: v.model, others: loaded.config.others };
}

/** An `olm.operand` blob with one image per name (`quay.io/operands/<name>:<version>-<image>`). */
export function operand(
  name: string,
  version: string,
  more: { package?: string; images?: string[]; digest?: string } = {},
): unknown {
  return {
    schema: "olm.operand",
    name,
    version,
    ...(more.package ? { package: more.package } : {}),
    images: (more.images ?? [name]).map((i) => ({
      name: i,
      image: `quay.io/operands/${name}:${version}-${i}${more.digest ? "-" + more.digest : ""}`,
    })),
  };
}

/** An `olm.relatedimages` blob. */
export function relatedImages(name: string, version: string, images: string[] = ["default"], tag = ""): unknown {
  return {
    schema: "olm.relatedimages",
    name,
    version,
    relatedImages: images.map((i) => ({ name: i, image: `quay.io/related/${name}:${version}-${i}${tag}` })),
  };
}

/** A seed 004 property: `olm.operand.supported`, `olm.operand.required` or `olm.relatedImageBundle`. */
export const opProp = (
  type: "olm.operand.supported" | "olm.operand.required" | "olm.relatedImageBundle",
  name: string,
  version: string,
) => ({ type, value: { name, version } });

/** A linear channel of versions `pkg.v<ver>`, each replacing the previous. */
export function chain(pkg: string, versions: string[], extra: (v: string, i: number) => Partial<B> = () => ({})): B[] {
  return versions.map((v, i) => ({
    name: `${pkg}.v${v}`,
    version: v,
    replaces: i > 0 ? `${pkg}.v${versions[i - 1]}` : undefined,
    ...extra(v, i),
  }));
}

export const sub = (
  name: string,
  pkg: string,
  more: { catalog?: string; channel?: string; version?: string; cls?: string } = {},
): Input => ({
  name,
  inputClass: more.cls ?? "subscription",
  constraints: [
    { type: "olm.catalog", value: { name: more.catalog ?? "", package: pkg, channel: more.channel ?? "" } },
    ...(more.version ? [{ type: "olm.packageVersion", value: { package: pkg, version: more.version } }] : []),
  ],
});
