/**
 * Resolution: an Input (package, channel, version range, CEL) and
 * installed operators → the resolver API's resolveset.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "./api.js";
import { href, replaceHash } from "./router.js";
import { BlobView, ErrorBox, useLoad } from "./util.js";

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message: string;
}
interface ResolveAnswer {
  resolved?: boolean;
  bundles?: {
    name: string;
    package: string;
    version: string;
    catalog: string;
    channel: string;
    action: string;
    requestedBy: string[];
    dependencyOf: string[];
    pivotFrom?: string;
  }[];
  inputs?: { name: string; conditions: Condition[] }[];
  warnings?: string[];
  error?: { code: string; message: string; problems?: { code: string; message: string }[] };
}

const FIELDS = ["package", "channel", "version", "cel", "catalog", "installed"] as const;
type Form = Record<(typeof FIELDS)[number], string>;

export function buildRequest(f: Form): { inputs: unknown[]; installed?: unknown; catalogs?: string[] } {
  const constraints: unknown[] = [];
  if (f.cel.trim()) constraints.push({ type: "olm.cel", value: { rule: f.cel.trim() } });
  const spec: Record<string, unknown> = {
    catalog: {
      package: f.package.trim(),
      ...(f.channel.trim() ? { channel: f.channel.trim() } : {}),
      ...(f.catalog ? { name: f.catalog } : {}),
    },
  };
  if (f.version.trim()) spec.version = f.version.trim();
  if (constraints.length > 0) spec.constraints = constraints;
  const req: { inputs: unknown[]; installed?: unknown } = {
    inputs: [{ apiVersion: "deppy.io/v1", kind: "Operator", metadata: { name: f.package.trim() || "input" }, spec }],
  };
  const ops = f.installed
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((l) => {
      const [pkg, bundle] = l.split(/\s+/);
      return { package: pkg, bundle: bundle ?? "" };
    });
  if (ops.length > 0) req.installed = { kind: "Installed", operators: ops };
  return req;
}

export function ResolvePage({ query }: { query: URLSearchParams }) {
  const catalogs = useLoad(() => api.catalogs(), []);
  const initial = Object.fromEntries(FIELDS.map((k) => [k, query.get(k) ?? ""])) as Form;
  const [form, setForm] = useState<Form>(initial);
  const [answer, setAnswer] = useState<{ status: number; body: ResolveAnswer } | { error: Error } | undefined>(
    undefined,
  );
  const [busy, setBusy] = useState(false);
  const cat = form.catalog || (catalogs.state === "ok" ? (catalogs.value[0]?.name ?? "") : "");
  // suggestions: the first 50 package names that contain what is typed (the server searches)
  const pkgs = useLoad(
    () => (cat ? api.packages(cat, { q: form.package, in: "name", limit: 50 }) : Promise.resolve(undefined)),
    [cat, form.package],
  );
  // only the latest request's answer is shown (an earlier, slower one must not overwrite it)
  const seq = useRef(0);
  const run = (f: Form): void => {
    const mine = ++seq.current;
    setBusy(true);
    api.post<ResolveAnswer>("/api/v1/resolve", buildRequest(f)).then(
      (a) => {
        if (mine !== seq.current) return;
        setAnswer(a);
        setBusy(false);
      },
      (error: Error) => {
        if (mine !== seq.current) return;
        setAnswer({ error });
        setBusy(false);
      },
    );
  };
  // a link with the form filled in runs at once: when the page opens on it, and when another one is
  // followed while the page is shown (the form then takes the link's values; the form the user is
  // typing into is left alone otherwise, whenever the effect runs)
  const linked = FIELDS.map((k) => query.get(k) ?? "").join("\u0000");
  const lastRun = useRef<string>(linked);
  useEffect(() => {
    if (initial.package) run(initial);
  }, []);
  useEffect(() => {
    if (linked === lastRun.current) return;
    lastRun.current = linked;
    const f = Object.fromEntries(FIELDS.map((k) => [k, query.get(k) ?? ""])) as Form;
    setForm(f);
    if (f.package) run(f);
    else {
      seq.current++;
      setAnswer(undefined);
      setBusy(false);
    }
  }, [linked]);
  const set = (k: keyof Form) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });
  return (
    <section>
      <h1>Resolve</h1>
      <p class="muted">
        What opcat's resolver (POST /api/v1/resolve) would install for an operator, given the operators already
        installed.
      </p>
      <form
        class="form"
        aria-label="resolution"
        onSubmit={(e) => {
          e.preventDefault();
          lastRun.current = FIELDS.map((k) => form[k]).join("\u0000");
          replaceHash(href(["resolve"], { ...form }));
          run(form);
        }}
      >
        <label>
          Package
          <input
            name="package"
            required
            value={form.package}
            onInput={set("package")}
            list="pkg-names"
            placeholder="e.g. etcd"
          />
        </label>
        <datalist id="pkg-names">
          {pkgs.state === "ok" && pkgs.value
            ? pkgs.value.packages.map((p) => <option key={p.name} value={p.name} />)
            : null}
        </datalist>
        <label>
          Channel
          <input name="channel" value={form.channel} onInput={set("channel")} placeholder="default channel" />
        </label>
        <label>
          Version range
          <input name="version" value={form.version} onInput={set("version")} placeholder="e.g. >=1.2.0 <2.0.0" />
        </label>
        <label>
          CEL rule
          <input
            name="cel"
            value={form.cel}
            onInput={set("cel")}
            placeholder={'e.g. properties.exists(p, p.type == "olm.maxOpenShiftVersion")'}
          />
        </label>
        <label>
          Catalog
          <select name="catalog" value={form.catalog} onChange={set("catalog")}>
            <option value="">any served catalog</option>
            {catalogs.state === "ok"
              ? catalogs.value.map((c) => (
                  <option key={c.name} value={c.name}>
                    {c.name}
                  </option>
                ))
              : null}
          </select>
        </label>
        <label class="wide">
          Installed operators (one per line: package bundle)
          <textarea
            name="installed"
            rows={3}
            value={form.installed}
            onInput={set("installed")}
            placeholder="etcd etcdoperator.v0.9.2"
          />
        </label>
        <div>
          <button type="submit" disabled={busy}>
            Resolve
          </button>
        </div>
      </form>
      {answer ? (
        "error" in answer ? (
          <ErrorBox error={answer.error} />
        ) : (
          <Answer a={answer} form={form} catalog={cat} />
        )
      ) : null}
    </section>
  );
}

function Answer({ a, form, catalog }: { a: { status: number; body: ResolveAnswer }; form: Form; catalog: string }) {
  const b = a.body;
  if (b.error) {
    return (
      <div class="error" role="alert" data-testid="resolution">
        <code class="code">{b.error.code}</code> {b.error.message}
        {b.error.problems ? (
          <ul>
            {b.error.problems.map((p, i) => (
              <li key={i}>{p.message}</li>
            ))}
          </ul>
        ) : null}
      </div>
    );
  }
  const failed = (b.inputs ?? []).flatMap((i) =>
    i.conditions
      .filter((c) => c.status === "True" && /Fail|Unsatisf|Invalid|Unsupported/.test(c.type))
      .map((c) => ({ input: i.name, c })),
  );
  return (
    <div data-testid="resolution" class={b.resolved ? "resolved" : "unresolved"}>
      <h2>{b.resolved ? "Resolved" : "Not resolved"}</h2>
      {failed.map(({ input, c }) => (
        <div key={input + c.type} class="error" role="alert">
          <strong>{input}</strong>: <mark>{c.message}</mark> <span class="muted">({c.reason ?? c.type})</span>
        </div>
      ))}
      {!b.resolved && form.package.trim() && catalog ? (
        <p>
          {/* the constraint drawn on the package's graph: the versions the range admits are outlined */}
          <a
            data-testid="constraint-graph"
            href={href(["c", catalog, "p", form.package.trim()], {
              tab: "graph",
              channel: form.channel.trim() || undefined,
              range: form.version.trim() || undefined,
            })}
          >
            {form.version.trim()
              ? `See which versions of ${form.package.trim()} ${form.version.trim()} admits on its upgrade graph`
              : `See the upgrade graph of ${form.package.trim()}`}
          </a>
        </p>
      ) : null}
      {(b.bundles ?? []).length > 0 ? (
        <table class="list" data-testid="resolved-bundles">
          <thead>
            <tr>
              <th scope="col">Bundle</th>
              <th scope="col">Version</th>
              <th scope="col">Action</th>
              <th scope="col">Catalog / channel</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {(b.bundles ?? []).map((x) => (
              <tr key={x.name}>
                <td>
                  <a href={href(["c", x.catalog, "p", x.package], { tab: "graph", channel: x.channel, node: x.name })}>
                    {x.name}
                  </a>
                </td>
                <td>{x.version}</td>
                <td>
                  {x.action}
                  {x.pivotFrom ? ` from ${x.pivotFrom}` : ""}
                </td>
                <td>
                  {x.catalog} / {x.channel}
                </td>
                <td>
                  {x.requestedBy.length > 0 ? `asked by ${x.requestedBy.join(", ")}` : ""}
                  {x.dependencyOf.length > 0 ? ` dependency of ${x.dependencyOf.join(", ")}` : ""}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {(b.warnings ?? []).map((w) => (
        <div class="warning" key={w}>
          {w}
        </div>
      ))}
      <details>
        <summary>Resolveset JSON (HTTP {a.status})</summary>
        <BlobView blob={b} />
      </details>
    </div>
  );
}
