/** What the last reload of a catalog changed (e.g. after `serve --watch` picked up an edit), package by package. */
import type { UiPackageChange } from "../web/uitypes.js";
import { api } from "./api.js";
import { href } from "./router.js";
import { Show, useLoad } from "./util.js";

export function ChangesPage({ catalog }: { catalog: string }) {
  const v = useLoad(() => api.changes(catalog), [catalog]);
  return (
    <section>
      <nav class="crumbs" aria-label="breadcrumb">
        <a href={href(["catalogs"])}>Catalogs</a> / <a href={href(["c", catalog])}>{catalog}</a> / <span>changes</span>
      </nav>
      <h1>Changes in {catalog}</h1>
      <Show v={v}>
        {(c) => (
          <>
            <p class="muted" data-testid="changes-summary">
              Revision {c.from.revision} ({new Date(c.from.lastModified).toLocaleString()}) → revision {c.to.revision} (
              {new Date(c.to.lastModified).toLocaleString()}):{" "}
              {c.packages.length === 0
                ? "no package changed."
                : `${c.packages.length} package${c.packages.length === 1 ? "" : "s"} changed.`}
            </p>
            {c.packages.length > 0 ? (
              <table class="list" data-testid="changes">
                <thead>
                  <tr>
                    <th scope="col">Package</th>
                    <th scope="col">Change</th>
                    <th scope="col">Bundles added</th>
                    <th scope="col">Bundles removed</th>
                    <th scope="col">Edges added</th>
                    <th scope="col">Edges removed</th>
                  </tr>
                </thead>
                <tbody>
                  {c.packages.map((p) => (
                    <Row key={p.package} catalog={catalog} p={p} />
                  ))}
                </tbody>
              </table>
            ) : null}
          </>
        )}
      </Show>
    </section>
  );
}

function Row({ catalog, p }: { catalog: string; p: UiPackageChange }) {
  const list = (xs: string[]) =>
    xs.length === 0 ? (
      <span class="muted">none</span>
    ) : (
      <span title={xs.join("\n")}>
        {xs.length}: {xs.slice(0, 3).join(", ")}
        {xs.length > 3 ? ", …" : ""}
      </span>
    );
  return (
    <tr class={`change-${p.status}`}>
      <td>
        <a href={href(["c", catalog, "p", p.package], { tab: "graph", channel: "*", compare: "previous" })}>
          {p.package}
        </a>
      </td>
      <td>{p.status}</td>
      <td>{list(p.addedBundles)}</td>
      <td>{list(p.removedBundles)}</td>
      <td>{list(p.addedEdges)}</td>
      <td>{list(p.removedEdges)}</td>
    </tr>
  );
}
