/**
 * The catalog list and a catalog's package list with search. The server searches and pages the list
 * (`/ui/api/catalogs/<c>/packages?q=&in=&offset=&limit=`): up to WHOLE matching packages are drawn
 * whole; more are drawn as a virtualised grid (TanStack Virtual), only the cards near the viewport,
 * fetched a page at a time as they scroll into view.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { UiPackageList, UiPackageSearchField, UiPackageSummary } from "../web/uitypes.js";
import { api } from "./api.js";
import { href, replaceHash } from "./router.js";
import { ErrorBox, MarkdownInline, Show, useLoad } from "./util.js";
import { useWindowVirtualizer } from "./virtual.js";

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

type Field = UiPackageSearchField;

/** Up to this many matching packages are drawn whole (the browser's find-in-page sees them all). */
const WHOLE = 300;
/** Packages fetched per request while scrolling a virtualised list. */
const PAGE = 120;
/** The virtualised grid: card height and gap (px), narrowest column (as `ul.packages` in style.css). */
const CARD = 132;
const GAP = 10;
const MIN_COLUMN = 380;

/** The matching packages of one search: what the server said, and the rows fetched so far. */
interface Found {
  catalog: string;
  key: string;
  revision: number;
  total: number;
  matched: number;
  bundles: number;
  /** Rows by index among the matches; undefined: not fetched yet. */
  rows: (UiPackageSummary | undefined)[];
  /** Pages asked for. */
  asked: Set<number>;
}

function found(catalog: string, key: string, l: UiPackageList): Found {
  const rows: (UiPackageSummary | undefined)[] = new Array(l.matched);
  l.packages.forEach((p, i) => (rows[l.offset + i] = p));
  const asked = new Set<number>();
  for (let p = 0; p * PAGE < l.packages.length; p++) asked.add(p);
  return { catalog, key, revision: l.revision, total: l.total, matched: l.matched, bundles: l.bundles, rows, asked };
}

export function PackageList({ catalog, query }: { catalog: string; query: URLSearchParams }) {
  const q = query.get("q") ?? "";
  const field = (query.get("in") ?? "all") as Field;
  const set = (nq: string, nf: Field): void =>
    replaceHash(href(["c", catalog], { q: nq, in: nf === "all" ? undefined : nf }));
  const key = `${field}\u0000${q}`;
  const [state, setState] = useState<Found | { catalog: string; key: string; error: Error } | undefined>();
  const [, redraw] = useState(0);
  // a reload of the catalog while pages are fetched starts the search again
  const [again, setAgain] = useState(0);
  useEffect(() => {
    let live = true;
    api.packages(catalog, { q, in: field, offset: 0, limit: WHOLE }).then(
      (l) => live && setState(found(catalog, key, l)),
      (error: Error) => live && setState({ catalog, key, error }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [catalog, key, again]);
  const need = (from: number, to: number): void => {
    if (!state || "error" in state) return;
    const s = state;
    for (let p = Math.floor(from / PAGE); p * PAGE < to; p++) {
      if (s.asked.has(p)) continue;
      s.asked.add(p);
      api.packages(catalog, { q, in: field, offset: p * PAGE, limit: PAGE }).then(
        (l) => {
          if (l.revision !== s.revision) return setAgain((n) => n + 1);
          l.packages.forEach((row, i) => (s.rows[l.offset + i] = row));
          redraw((n) => n + 1);
        },
        () => s.asked.delete(p),
      );
    }
  };
  const shown = state && state.catalog === catalog ? state : undefined;
  return (
    <section>
      <nav class="crumbs" aria-label="breadcrumb">
        <a href={href(["catalogs"])}>Catalogs</a> / <span>{catalog}</span>
      </nav>
      <h1>{catalog}</h1>
      {!shown ? (
        <p class="muted" aria-busy="true">
          Loading…
        </p>
      ) : "error" in shown ? (
        <ErrorBox error={shown.error} />
      ) : (
        <Packages found={shown} catalog={catalog} q={q} field={field} set={set} need={need} />
      )}
    </section>
  );
}

function Packages({
  found: f,
  catalog,
  q,
  field,
  set,
  need,
}: {
  found: Found;
  catalog: string;
  q: string;
  field: Field;
  set: (q: string, f: Field) => void;
  need: (from: number, to: number) => void;
}) {
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
        {f.matched} of {f.total} packages · {f.bundles} bundles
      </p>
      {f.matched <= WHOLE ? (
        <ul class="packages" data-testid="packages">
          {f.rows.map((p) => (p ? <Card key={p.name} p={p} catalog={catalog} /> : null))}
        </ul>
      ) : (
        <VirtualCards key={f.key} found={f} catalog={catalog} need={need} />
      )}
    </>
  );
}

/** The grid of cards, virtualised by rows of cards: only the rows near the viewport are in the page. */
function VirtualCards({
  found: f,
  catalog,
  need,
}: {
  found: Found;
  catalog: string;
  need: (from: number, to: number) => void;
}) {
  const ul = useRef<HTMLUListElement>(null);
  const [box, setBox] = useState({ top: 0, width: 0 });
  useLayoutEffect(() => {
    const el = ul.current;
    if (!el) return;
    const top = el.getBoundingClientRect().top + window.scrollY;
    const width = el.clientWidth;
    if (top !== box.top || width !== box.width) setBox({ top, width });
  });
  const cols = Math.max(1, Math.floor((box.width + GAP) / (MIN_COLUMN + GAP)));
  const colWidth = (box.width - GAP * (cols - 1)) / cols;
  const v = useWindowVirtualizer({
    count: Math.ceil(f.matched / cols),
    estimateSize: () => CARD + GAP,
    overscan: 3,
    scrollMargin: box.top,
  });
  const lines = v.getVirtualItems();
  const first = lines.length > 0 ? lines[0].index * cols : 0;
  const end = lines.length > 0 ? Math.min(f.matched, (lines[lines.length - 1].index + 1) * cols) : 0;
  useEffect(() => need(first, end));
  const cards = [];
  for (const line of lines)
    for (let c = 0; c < cols; c++) {
      const i = line.index * cols + c;
      if (i >= f.matched) break;
      const style = {
        transform: `translate(${(c * (colWidth + GAP)).toFixed(1)}px, ${line.start - box.top}px)`,
        width: `${colWidth.toFixed(1)}px`,
        height: `${CARD}px`,
      };
      const p = f.rows[i];
      cards.push(
        p ? (
          <Card key={p.name} p={p} catalog={catalog} style={style} />
        ) : (
          <li key={`#${i}`} class="pkg-card pending" style={style} aria-busy="true">
            <span class="muted">Loading…</span>
          </li>
        ),
      );
    }
  return (
    <ul ref={ul} class="packages virtual" data-testid="packages" style={{ height: `${v.getTotalSize()}px` }}>
      {cards}
    </ul>
  );
}

function Card({ p, catalog, style }: { p: UiPackageSummary; catalog: string; style?: Record<string, string> }) {
  return (
    <li class="pkg-card" style={style}>
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
        {p.summary ? (
          <div class="summary">
            <MarkdownInline text={p.summary} />
          </div>
        ) : null}
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
  );
}
