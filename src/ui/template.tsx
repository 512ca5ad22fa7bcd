/**
 * Templates: paste or upload a basic/semver/graph template, render it
 * with the catalog as the reuse source, see the result.
 */
import { useState } from "preact/hooks";
import type { UiErrorBody, UiRenderAnswer } from "../web/uitypes.js";
import { api } from "./api.js";
import { BlobView, CopyButton, ErrorBox, useLoad } from "./util.js";

const SAMPLE = `schema: olm.semver
generateMajorChannels: true
generateMinorChannels: false
stable:
  bundles:
    - image: <a bundle image of the catalog>
`;

export function TemplatePage() {
  const catalogs = useLoad(() => api.catalogs(), []);
  const [text, setText] = useState("");
  const [catalog, setCatalog] = useState("");
  const [out, setOut] = useState<{ status: number; body: UiRenderAnswer | UiErrorBody } | { error: Error } | undefined>(
    undefined,
  );
  const [busy, setBusy] = useState(false);
  return (
    <section>
      <h1>Render a template</h1>
      <p class="muted">
        A basic, semver or graph template, rendered with a served catalog as the <code>--reuse</code> source (offline:
        its bundles answer every image reference; nothing is pulled and nothing is written).
      </p>
      <form
        class="form"
        aria-label="template"
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          api.render({ template: text, catalog: catalog || undefined }).then(
            (a) => {
              setOut(a);
              setBusy(false);
            },
            (error: Error) => {
              setOut({ error });
              setBusy(false);
            },
          );
        }}
      >
        <label>
          Reuse catalog
          <select name="catalog" value={catalog} onChange={(e) => setCatalog((e.target as HTMLSelectElement).value)}>
            {catalogs.state === "ok"
              ? catalogs.value.map((c) => (
                  <option key={c.name} value={c.name}>
                    {c.name}
                  </option>
                ))
              : null}
          </select>
        </label>
        <label>
          Upload{" "}
          <input
            type="file"
            name="file"
            accept=".yaml,.yml,.json"
            onChange={(e) => {
              const f = (e.target as HTMLInputElement).files?.[0];
              if (f) void f.text().then(setText);
            }}
          />
        </label>
        <label class="wide">
          Template (YAML or JSON)
          <textarea
            name="template"
            rows={14}
            value={text}
            placeholder={SAMPLE}
            spellcheck={false}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          />
        </label>
        <div>
          <button type="submit" disabled={busy || text.trim() === ""}>
            Render
          </button>
        </div>
      </form>
      {out ? "error" in out ? <ErrorBox error={out.error} /> : <Result a={out} /> : null}
    </section>
  );
}

function Result({ a }: { a: { status: number; body: UiRenderAnswer | UiErrorBody } }) {
  if ("error" in a.body) {
    const e = a.body.error;
    return (
      <div data-testid="render-result">
        <div class="error" role="alert">
          <code class="code">{e.code}</code> {e.message}
        </div>
      </div>
    );
  }
  const r = a.body;
  const counts = new Map<string, number>();
  for (const b of r.blobs) counts.set(String(b.schema), (counts.get(String(b.schema)) ?? 0) + 1);
  return (
    <div data-testid="render-result">
      <h2>Rendered catalog</h2>
      <p role="status">{[...counts].map(([s, n]) => `${n} × ${s}`).join(", ")}</p>
      {r.diff.map((d) => (
        <div key={d.package} class="diff" data-testid="render-diff">
          <h3>
            {d.package}: {d.existing ? "compared with the served catalog" : "new package"}
          </h3>
          <ul>
            {d.addedBundles.map((b) => (
              <li key={`+${b}`} class="add">
                + bundle {b}
              </li>
            ))}
            {d.removedBundles.map((b) => (
              <li key={`-${b}`} class="del">
                − bundle {b}
              </li>
            ))}
            {d.addedEdges.map((e) => (
              <li key={`+${e}`} class="add">
                + edge {e}
              </li>
            ))}
            {d.removedEdges.map((e) => (
              <li key={`-${e}`} class="del">
                − edge {e}
              </li>
            ))}
            {d.addedBundles.length + d.removedBundles.length + d.addedEdges.length + d.removedEdges.length === 0 ? (
              <li>no change in bundles or edges</li>
            ) : null}
          </ul>
        </div>
      ))}
      {r.warnings.map((w) => (
        <div class="warning" key={w}>
          {w}
        </div>
      ))}
      <details open>
        <summary>Upgrade graph (Mermaid)</summary>
        <CopyButton text={() => r.mermaid} />
        <pre class="blob-text" data-testid="render-mermaid" tabIndex={0}>
          {r.mermaid}
        </pre>
      </details>
      {r.blobs.map((b, i) => (
        <details key={i}>
          <summary>
            {String(b.schema)} {String(b.name ?? "")}
          </summary>
          <BlobView blob={b} />
        </details>
      ))}
    </div>
  );
}
