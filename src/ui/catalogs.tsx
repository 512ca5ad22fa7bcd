/** The catalog list and a catalog's package list with search. */
import { useMemo } from "preact/hooks";
import type { UiPackageSummary } from "../web/uitypes.js";
import { api } from "./api.js";
import { href, replaceHash } from "./router.js";
import { Show, useLoad } from "./util.js";

export function CatalogList() {
  const v = useLoad(() => api.catalogs(), []);
  return (
    <section>
      <h1>Catalogs</h1>
      <Show v={v}>
        {(cs) => (
          <table class="list" data-testid="catalogs">
            <thead>
              <tr>
                <th scope="col">Catalog</th>
                <th scope="col">Packages</th>
                <th scope="col">Channels</th>
                <th scope="col">Bundles</th>
                <th scope="col">Revision</th>
              </tr>
            </thead>
            <tbody>
              {cs.map((c) => (
                <tr key={c.name}>
                  <td>
                    {c.ready ? (
                      <a href={href(["c", c.name])}>{c.name}</a>
                    ) : (
                      <span>
                        {c.name} <em class="muted">(no valid content yet)</em>
                      </span>
                    )}
                  </td>
                  <td class="num">{c.packages}</td>
                  <td class="num">{c.channels}</td>
                  <td class="num">{c.bundles}</td>
                  <td class="num" title={c.digest}>
                    {c.revision}
                    {c.lastModified ? ` · ${new Date(c.lastModified).toLocaleString()}` : ""}
                    {c.previousRevision > 0 ? (
                      <>
                        {" · "}
                        <a href={href(["c", c.name, "changes"])}>changes since {c.previousRevision}</a>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
    </section>
  );
}

type Field = "all" | "name" | "keyword" | "api";

export function matches(p: UiPackageSummary, q: string, field: Field): boolean {
  if (q === "") return true;
  const needle = q.toLowerCase();
  const inName = (): boolean => p.name.toLowerCase().includes(needle) || p.displayName.toLowerCase().includes(needle);
  const inKw = (): boolean => p.keywords.some((k) => k.toLowerCase().includes(needle));
  const inApi = (): boolean => p.providedApis.some((a) => a.toLowerCase().includes(needle));
  switch (field) {
    case "name":
      return inName();
    case "keyword":
      return inKw();
    case "api":
      return inApi();
    default:
      return inName() || inKw() || inApi() || p.provider.toLowerCase().includes(needle);
  }
}

export function PackageList({ catalog, query }: { catalog: string; query: URLSearchParams }) {
  const v = useLoad(() => api.packages(catalog), [catalog]);
  const q = query.get("q") ?? "";
  const field = (query.get("in") ?? "all") as Field;
  const set = (nq: string, nf: Field): void =>
    replaceHash(href(["c", catalog], { q: nq, in: nf === "all" ? undefined : nf }));
  return (
    <section>
      <nav class="crumbs" aria-label="breadcrumb">
        <a href={href(["catalogs"])}>Catalogs</a> / <span>{catalog}</span>
      </nav>
      <h1>{catalog}</h1>
      <Show v={v}>{(list) => <Packages list={list.packages} catalog={catalog} q={q} field={field} set={set} />}</Show>
    </section>
  );
}

function Packages({
  list,
  catalog,
  q,
  field,
  set,
}: {
  list: UiPackageSummary[];
  catalog: string;
  q: string;
  field: Field;
  set: (q: string, f: Field) => void;
}) {
  const shown = useMemo(() => list.filter((p) => matches(p, q, field)), [list, q, field]);
  const bundles = shown.reduce((n, p) => n + p.bundles, 0);
  return (
    <>
      <form class="search" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search{" "}
          <input
            type="search"
            name="q"
            value={q}
            placeholder="name, keyword or API (e.g. Kafka)"
            aria-label="search packages"
            onInput={(e) => set((e.target as HTMLInputElement).value, field)}
          />
        </label>
        <label>
          in{" "}
          <select name="in" value={field} onChange={(e) => set(q, (e.target as HTMLSelectElement).value as Field)}>
            <option value="all">everything</option>
            <option value="name">names</option>
            <option value="keyword">keywords</option>
            <option value="api">provided APIs</option>
          </select>
        </label>
      </form>
      <p class="counts" data-testid="counts" role="status">
        {shown.length} of {list.length} packages · {bundles} bundles
      </p>
      <ul class="packages" data-testid="packages">
        {shown.map((p) => (
          <li key={p.name} class="pkg-card">
            {p.hasIcon ? (
              <img class="icon" src={api.iconUrl(catalog, p.name)} alt="" width={40} height={40} loading="lazy" />
            ) : (
              <span class="icon placeholder" aria-hidden="true">
                {p.name.slice(0, 1).toUpperCase()}
              </span>
            )}
            <div>
              <a class="pkg-name" href={href(["c", catalog, "p", p.name])}>
                {p.displayName !== p.name ? `${p.displayName}` : p.name}
              </a>
              {p.displayName !== p.name ? <span class="muted"> ({p.name})</span> : null}
              {p.deprecated ? <span class="badge warn">deprecated</span> : null}
              <div class="muted small-text">
                {p.provider ? `${p.provider} · ` : ""}
                {p.headVersion ? `v${p.headVersion} · ` : ""}
                {p.channels.length} channel{p.channels.length === 1 ? "" : "s"} · {p.bundles} bundle
                {p.bundles === 1 ? "" : "s"}
              </div>
              {p.summary ? <div class="summary">{p.summary}</div> : null}
              {p.keywords.length > 0 ? (
                <div class="tags">
                  {p.keywords.slice(0, 8).map((k) => (
                    <span class="tag" key={k}>
                      {k}
                    </span>
                  ))}
                </div>
              ) : null}
            </div>
          </li>
        ))}
      </ul>
    </>
  );
}
