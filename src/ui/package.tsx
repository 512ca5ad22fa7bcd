/** A package: overview (channels, deprecations, description), bundles (properties, images, blobs), upgrade graph. */
import { useMemo } from "preact/hooks";
import type { UiBlob, UiPackageDetail } from "../web/uitypes.js";
import { api } from "./api.js";
import { GraphView } from "./graph.js";
import { href, replaceHash } from "./router.js";
import { BlobView, bundleVersion, CopyButton, Fold, Markdown, props, Show, str, useLoad } from "./util.js";

type Tab = "overview" | "bundles" | "graph";

export function PackagePage({ catalog, pkg, query }: { catalog: string; pkg: string; query: URLSearchParams }) {
  const v = useLoad(() => api.pkg(catalog, pkg), [catalog, pkg]);
  const tab = (query.get("tab") ?? "overview") as Tab;
  const link = (t: Tab, extra: Record<string, string | undefined> = {}): string =>
    href(["c", catalog, "p", pkg], { tab: t === "overview" ? undefined : t, ...extra });
  return (
    <section>
      <nav class="crumbs" aria-label="breadcrumb">
        <a href={href(["catalogs"])}>Catalogs</a> / <a href={href(["c", catalog])}>{catalog}</a> / <span>{pkg}</span>
      </nav>
      {/* the graph tab does not wait for the package's blobs: both are fetched at once */}
      <Show v={v}>{(d) => <Header d={d} catalog={catalog} />}</Show>
      <div class="tabs" role="tablist" aria-label="package views">
        {(["overview", "bundles", "graph"] as Tab[]).map((t) => (
          <a key={t} role="tab" aria-selected={tab === t} href={link(t)} class={tab === t ? "tab active" : "tab"}>
            {t === "overview"
              ? "Overview"
              : t === "bundles"
                ? v.state === "ok"
                  ? `Bundles (${v.value.bundles.length})`
                  : "Bundles"
                : "Upgrade graph"}
          </a>
        ))}
      </div>
      <div role="tabpanel">
        {tab === "graph" ? (
          <GraphView catalog={catalog} pkg={pkg} query={query} setQuery={(q) => replaceHash(link("graph", q))} />
        ) : (
          <Show v={v}>
            {(d) =>
              tab === "bundles" ? (
                <Bundles
                  d={d}
                  selected={query.get("bundle") ?? ""}
                  select={(b) => replaceHash(link("bundles", { bundle: b }))}
                />
              ) : (
                <Overview d={d} catalog={catalog} link={link} />
              )
            }
          </Show>
        )}
      </div>
    </section>
  );
}

function csvMeta(b: UiBlob | undefined): Record<string, unknown> | undefined {
  if (!b) return undefined;
  for (const p of props(b)) if (p.type === "olm.csv.metadata") return p.value as Record<string, unknown>;
  return undefined;
}

function headOf(d: UiPackageDetail, channel: string): string {
  const ch = d.channels.find((c) => c.name === channel);
  const entries = (ch?.entries as UiBlob[] | undefined) ?? [];
  const replaced = new Set<string>();
  for (const e of entries) {
    if (str(e.replaces)) replaced.add(str(e.replaces));
    for (const s of (e.skips as string[] | undefined) ?? []) replaced.add(s);
  }
  const heads = entries.filter((e) => !replaced.has(str(e.name)));
  return heads.length === 1 ? str(heads[0].name) : "";
}

interface DepEntry {
  reference: { schema: string; name?: string };
  message: string;
}

function deprecationsOf(d: UiPackageDetail): DepEntry[] {
  return ((d.deprecations?.entries as DepEntry[] | undefined) ?? []).filter((e) => e && typeof e.message === "string");
}

function Header({ d, catalog }: { d: UiPackageDetail; catalog: string }) {
  const name = str(d.package.name);
  const head = headOf(d, str(d.package.defaultChannel));
  const meta = csvMeta(d.bundles.find((b) => b.name === head));
  const icon = d.package.icon as UiBlob | undefined;
  return (
    <header class="pkg-head">
      {icon && typeof icon.base64data === "string" ? (
        <img class="icon big" src={api.iconUrl(catalog, name)} alt={`${name} icon`} width={64} height={64} />
      ) : null}
      <div>
        <h1>{str(meta?.displayName) || name}</h1>
        <div class="muted">
          {name}
          {meta && (meta.provider as UiBlob | undefined)?.name ? ` · ${str((meta.provider as UiBlob).name)}` : ""}
          {" · default channel "}
          <strong data-testid="default-channel">{str(d.package.defaultChannel)}</strong>
          {head ? ` · head ${head}` : ""}
        </div>
      </div>
    </header>
  );
}

function Overview({
  d,
  catalog,
  link,
}: {
  d: UiPackageDetail;
  catalog: string;
  link: (t: Tab, extra?: Record<string, string | undefined>) => string;
}) {
  const deps = deprecationsOf(d);
  const defaultChannel = str(d.package.defaultChannel);
  const head = headOf(d, defaultChannel);
  const meta = csvMeta(d.bundles.find((b) => b.name === head));
  // the package's own description when the catalog's author wrote one (a deliberate choice for the
  // package), else the (Markdown) description of the default channel head's CSV, else its short one
  const description =
    str(d.package.description) || str(meta?.description) || str((meta?.annotations as UiBlob | undefined)?.description);
  const depByChannel = new Map(
    deps.filter((e) => e.reference.schema === "olm.channel").map((e) => [e.reference.name ?? "", e.message]),
  );
  const pkgDep = deps.find((e) => e.reference.schema === "olm.package");
  const channels = [...d.channels].sort((a, b) =>
    str(a.name) === defaultChannel ? -1 : str(b.name) === defaultChannel ? 1 : str(a.name).localeCompare(str(b.name)),
  );
  return (
    <div class="overview">
      {pkgDep ? (
        <div class="deprecation" role="note">
          <strong>Deprecated package:</strong> {pkgDep.message}
        </div>
      ) : null}
      <h2>Channels</h2>
      <table class="list" data-testid="channels">
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">Head</th>
            <th scope="col">Entries</th>
            <th scope="col">Deprecation</th>
          </tr>
        </thead>
        <tbody>
          {channels.map((c) => (
            <tr key={str(c.name)}>
              <td>
                <a href={link("graph", { channel: str(c.name) })}>{str(c.name)}</a>
                {str(c.name) === defaultChannel ? <span class="badge">default</span> : null}
              </td>
              <td>{headOf(d, str(c.name))}</td>
              <td class="num">{((c.entries as unknown[] | undefined) ?? []).length}</td>
              <td>{depByChannel.get(str(c.name)) ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {deps.filter((e) => e.reference.schema === "olm.bundle").length > 0 ? (
        <>
          <h2>Deprecated bundles</h2>
          <ul>
            {deps
              .filter((e) => e.reference.schema === "olm.bundle")
              .map((e) => (
                <li key={e.reference.name}>
                  <a href={link("bundles", { bundle: e.reference.name })}>{e.reference.name}</a>: {e.message}
                </li>
              ))}
          </ul>
        </>
      ) : null}
      <h2>Description</h2>
      {description ? <Markdown text={description} /> : <p class="muted">No description.</p>}
      <MirrorImages d={d} />
      <Fold summary="Package blob">{() => <BlobView blob={d.package} title="olm.package" />}</Fold>
      {d.deprecations ? (
        <Fold summary="Deprecations blob">{() => <BlobView blob={d.deprecations} title="olm.deprecations" />}</Fold>
      ) : null}
      <p class="muted small-text">
        Catalog {catalog}, revision {d.revision}.
      </p>
    </div>
  );
}

function relatedImages(b: UiBlob): { name: string; image: string }[] {
  return Array.isArray(b.relatedImages) ? (b.relatedImages as { name: string; image: string }[]) : [];
}

/** Every image a mirror of this package needs: the bundle images and all related images. */
function MirrorImages({ d }: { d: UiPackageDetail }) {
  const images = useMemo(() => {
    const s = new Set<string>();
    for (const b of d.bundles) {
      if (str(b.image)) s.add(str(b.image));
      for (const r of relatedImages(b)) if (r.image) s.add(r.image);
    }
    return [...s].sort();
  }, [d]);
  return (
    <details>
      <summary>Images a mirror needs ({images.length})</summary>
      <CopyButton text={() => images.join("\n") + "\n"} label="Copy list" />
      <pre class="blob-text" tabIndex={0}>
        {images.join("\n")}
      </pre>
    </details>
  );
}

function Bundles({ d, selected, select }: { d: UiPackageDetail; selected: string; select: (b: string) => void }) {
  const channelsOf = useMemo(() => {
    const m = new Map<string, string[]>();
    for (const c of d.channels)
      for (const e of (c.entries as UiBlob[] | undefined) ?? [])
        m.set(str(e.name), [...(m.get(str(e.name)) ?? []), str(c.name)]);
    return m;
  }, [d]);
  const depBundles = new Map(
    deprecationsOf(d)
      .filter((e) => e.reference.schema === "olm.bundle")
      .map((e) => [e.reference.name ?? "", e.message]),
  );
  const sel = d.bundles.find((b) => b.name === selected);
  return (
    <div class="bundles">
      <table class="list" data-testid="bundles">
        <thead>
          <tr>
            <th scope="col">Bundle</th>
            <th scope="col">Version</th>
            <th scope="col">Channels</th>
            <th scope="col">Image</th>
          </tr>
        </thead>
        <tbody>
          {d.bundles.map((b) => (
            <tr key={str(b.name)} class={str(b.name) === selected ? "selected" : ""}>
              <td>
                <button type="button" class="linkish" onClick={() => select(str(b.name))}>
                  {str(b.name)}
                </button>
                {depBundles.has(str(b.name)) ? <span class="badge warn">deprecated</span> : null}
              </td>
              <td>{bundleVersion(b)}</td>
              <td>{(channelsOf.get(str(b.name)) ?? []).join(", ")}</td>
              <td class="mono ellipsis" title={str(b.image)}>
                {str(b.image)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {sel ? (
        <BundleDetail b={sel} deprecation={depBundles.get(str(sel.name))} />
      ) : (
        <p class="muted">Select a bundle for its properties, related images and blob.</p>
      )}
    </div>
  );
}

function BundleDetail({ b, deprecation }: { b: UiBlob; deprecation?: string }) {
  return (
    <article class="bundle-detail" data-testid="bundle-detail" aria-label={`bundle ${str(b.name)}`}>
      <h2>{str(b.name)}</h2>
      {deprecation ? <div class="deprecation">Deprecated: {deprecation}</div> : null}
      <p class="mono">{str(b.image)}</p>
      <h3>Properties</h3>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {props(b).map((p, i) => (
            <tr key={i}>
              <td class="mono">{p.type}</td>
              <td class="mono small-text">
                {p.type === "olm.bundle.object" ? "(manifest, see the blob)" : JSON.stringify(p.value).slice(0, 400)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Related images</h3>
      <ul>
        {relatedImages(b).map((r) => (
          <li key={r.image + r.name}>
            <span class="mono">{r.image}</span> {r.name ? <span class="muted">({r.name})</span> : null}
          </li>
        ))}
      </ul>
      <BlobView blob={b} title="olm.bundle" />
    </article>
  );
}
