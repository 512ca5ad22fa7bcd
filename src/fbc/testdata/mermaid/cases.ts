/**
 * Deterministic random catalogs for the Mermaid golden vectors. The same cases were fed to the Go
 * oracle (operator-registry's MermaidWriter) to produce vectors.json; do not change the generator
 * without regenerating the vectors.
 */

export interface MermaidCase {
  name: string;
  /** Catalog text (one compact JSON blob per line). */
  catalog: string;
  minEdge?: string;
  packageName?: string;
  drawV0Semantics: boolean;
}

type Blob = Record<string, unknown>;
interface Entry {
  name: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}
interface BundleBlob {
  schema: string;
  name: string;
  package: string;
  image: string;
  properties: { type: string; value: unknown }[];
}

export function generateMermaidCases(): MermaidCase[] {
  let seed = 12345;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const ri = (n: number): number => Math.floor(rnd() * n);
  const pick = <T>(a: readonly T[]): T => a[ri(a.length)];
  const shuffle = <T>(a: T[]): T[] => {
    for (let i = a.length - 1; i > 0; i--) {
      const j = ri(i + 1);
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  };
  const text = (blobs: unknown[]): string => blobs.map((b) => JSON.stringify(b)).join("\n") + "\n";

  const VERS = [
    "0.0.1", "0.1.0", "0.1.0-rc.1", "0.2.0", "1.0.0", "1.0.0-alpha", "1.0.0+build", "1.2.3", "2.0.0", "0.1.0", "1.0.0",
  ];
  const RANGES = [
    "<0.1.0", "<0.2.0", ">=0.1.0 <1.0.0", "<1.0.0 || >=2.0.0", ">=0.0.1", "1.x", "<=1.0.0", "!1.0.0", "bad range",
    ">=a", "<1.0", "", "", "", "", "> 0.1.0", ">=0.1.0-0 <0.2.0",
  ];
  const PKGS = ["anakin", "boba", "c3po", "dooku", "ewok", "pkg.ü", 'q"uote'];
  const CHANS = ["stable", "beta", "alpha", "fast", "candidate", "stable-v1", "é", "x"];

  const cases: MermaidCase[] = [];
  for (let i = 0; i < 250; i++) {
    const big = i % 30 === 0;
    const npk = big ? 6 + ri(8) : 1 + ri(4);
    const blobs: Blob[] = [];
    const allBundles: BundleBlob[] = [];
    const pkgNames: string[] = [];
    for (let p = 0; p < npk; p++) pkgNames.push(p < PKGS.length ? PKGS[p] : `p${p}`);
    const channels: { schema: string; package: string; name: string; entries?: Entry[] }[] = [];
    for (const pkg of pkgNames) {
      blobs.push({ schema: "olm.package", name: pkg, defaultChannel: "stable" });
      const nb = big ? 5 + ri(10) : 1 + ri(6);
      const bnames: string[] = [];
      for (let b = 0; b < nb; b++) {
        const v = pick(VERS);
        const name = rnd() < 0.05 && allBundles.length > 0 ? pick(allBundles).name : `${pkg}.v${v}-${b}`;
        bnames.push(name);
        if (rnd() < 0.08) continue; // an entry without a bundle blob
        const props: { type: string; value: unknown }[] = [
          { type: "olm.package", value: { packageName: pkg, version: v } },
        ];
        if (rnd() < 0.2) props.push({ type: "olm.gvk", value: { group: "g", kind: "K", version: "v1" } });
        const bb: BundleBlob = { schema: "olm.bundle", name, package: pkg, image: `img/${name}`, properties: props };
        blobs.push(bb as unknown as Blob);
        allBundles.push(bb);
      }
      const nch = big ? 1 + ri(6) : 1 + ri(3);
      const used = new Set<string>();
      for (let c = 0; c < nch; c++) {
        const cn = pick(CHANS);
        if (used.has(cn)) continue;
        used.add(cn);
        const entries: Entry[] = [];
        const members = shuffle(bnames.slice()).slice(0, ri(bnames.length + 1));
        if (rnd() < 0.1) members.push(`ghost-${pkg}-${c}`);
        for (const m of members) {
          const e: Entry = { name: m };
          if (rnd() < 0.5 && members.length > 1) e.replaces = pick(members.concat(["unknown.v9"]));
          if (rnd() < 0.35) e.skips = members.filter(() => rnd() < 0.3);
          if (rnd() < 0.4) {
            const sr = pick(RANGES);
            if (sr) e.skipRange = sr;
          }
          entries.push(e);
        }
        const ch: (typeof channels)[number] = { schema: "olm.channel", package: pkg, name: cn };
        if (entries.length > 0 || rnd() < 0.5) ch.entries = entries;
        channels.push(ch);
      }
    }
    blobs.push(...shuffle(channels));
    if (rnd() < 0.6) {
      for (const pkg of pkgNames) {
        if (rnd() < 0.5) continue;
        const entries: Blob[] = [];
        if (rnd() < 0.3) entries.push({ reference: { schema: "olm.package" }, message: "m" });
        if (rnd() < 0.5) entries.push({ reference: { schema: "olm.channel", name: pick(CHANS) }, message: "m" });
        for (const b of allBundles)
          if (rnd() < 0.15) entries.push({ reference: { schema: "olm.bundle", name: b.name }, message: "m" });
        blobs.push({ schema: "olm.deprecations", package: pkg, entries });
      }
    }
    const c: MermaidCase = { name: `random-${i}`, catalog: "", drawV0Semantics: false };
    const o = rnd();
    const bundleNames = allBundles.map((b) => b.name);
    if (o < 0.3 && allBundles.length > 0) {
      const inChannels = channels
        .flatMap((ch) => (ch.entries ?? []).map((e) => e.name))
        .filter((n) => bundleNames.includes(n));
      c.minEdge = pick(rnd() < 0.8 && inChannels.length > 0 ? inChannels : bundleNames);
    } else if (o < 0.33) c.minEdge = "nope";
    if (rnd() < 0.3) c.packageName = rnd() < 0.9 ? pick(pkgNames) : "nopkg";
    c.drawV0Semantics = rnd() < 0.6;
    // Occasional bad bundles.
    const er = rnd();
    if (allBundles.length > 0) {
      if (er < 0.03) (pick(allBundles).properties[0].value as { version: string }).version = "1.0";
      else if (er < 0.06)
        pick(allBundles).properties.push({ type: "olm.package", value: { packageName: "x", version: "1.0.0" } });
      else if (er < 0.08) pick(allBundles).properties[0].value = "str";
      else if (er < 0.09) pick(allBundles).properties = [];
    }
    c.catalog = text(blobs);
    cases.push(c);
  }

  // Many channels sharing few names across packages: exercises every path of Go's pdqsort.
  for (const n of [13, 30, 60, 90]) {
    const blobs: Blob[] = [];
    const chans: Blob[] = [];
    for (let p = 0; p < n; p++) {
      const pkg = `p${String(p).padStart(3, "0")}`;
      blobs.push({ schema: "olm.package", name: pkg, defaultChannel: "stable" });
      const names = [`${pkg}.a`, `${pkg}.b`, `${pkg}.c`];
      const vs = ["1.0.0", "1.0.0", "0.5.0"];
      names.forEach((nm, k) =>
        blobs.push({
          schema: "olm.bundle",
          name: nm,
          package: pkg,
          image: "i",
          properties: [{ type: "olm.package", value: { packageName: pkg, version: vs[k] } }],
        }),
      );
      for (const cn of ["stable", "beta", n % 2 ? "alpha" : "stable2"].slice(0, 1 + (p % 3))) {
        chans.push({
          schema: "olm.channel",
          package: pkg,
          name: cn,
          entries: [
            { name: names[0], skips: [names[2]] },
            { name: names[1], replaces: names[2], skipRange: "<1.0.0" },
            { name: names[2] },
          ],
        });
      }
      blobs.push({
        schema: "olm.deprecations",
        package: pkg,
        entries: [{ reference: { schema: "olm.package" }, message: "m" }],
      });
    }
    blobs.push(...shuffle(chans));
    blobs.push({
      schema: "olm.deprecations",
      package: "zz",
      entries: [{ reference: { schema: "olm.channel", name: "beta" }, message: "m" }],
    });
    cases.push({ name: `pdq-channels-${n}`, catalog: text(blobs), drawV0Semantics: true });
  }

  // One channel with many entries of few distinct versions: pdqsort on entries.
  for (const n of [13, 40, 51, 100, 300]) {
    const blobs: Blob[] = [{ schema: "olm.package", name: "p", defaultChannel: "c" }];
    const entries: Entry[] = [];
    for (let k = 0; k < n; k++) {
      const name = `p.e${k}`;
      blobs.push({
        schema: "olm.bundle",
        name,
        package: "p",
        image: "i",
        properties: [{ type: "olm.package", value: { packageName: "p", version: pick(["1.0.0", "2.0.0", "3.0.0"]) } }],
      });
      entries.push(k % 7 === 0 ? { name, skips: [`p.e${(k + 3) % n}`] } : { name, replaces: `p.e${(k + 1) % n}` });
    }
    blobs.push({ schema: "olm.channel", package: "p", name: "c", entries });
    cases.push({ name: `pdq-entries-${n}`, catalog: text(blobs), drawV0Semantics: true });
  }
  return cases;
}
