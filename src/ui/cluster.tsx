/**
 * The cluster pages (serve --kubeconfig): Operators with status, update options and components;
 * Instances, and one Instance's review page with what it would create and grant and the
 * approve/deny buttons, which act with the user's own token (never the server's credentials).
 */
import { useState } from "preact/hooks";
import type { UiCondition, UiInstance } from "../web/uitypes.js";
import { api } from "./api.js";
import { href } from "./router.js";
import { ErrorBox, Show, useLoad } from "./util.js";

function cond(cs: UiCondition[], type: string): UiCondition | undefined {
  return cs.find((c) => c.type === type);
}

function CondCell({ c }: { c: UiCondition | undefined }) {
  if (!c) return <span class="muted">–</span>;
  return (
    <span title={c.message} class={c.status === "True" ? "ok-text" : c.status === "False" ? "warn-text" : ""}>
      {c.status}
      {c.reason ? ` (${c.reason})` : ""}
    </span>
  );
}

export function ClusterPage() {
  const info = useLoad(() => api.cluster(), []);
  const ops = useLoad(() => api.operators(), []);
  const insts = useLoad(() => api.instances(), []);
  return (
    <section>
      <h1>Cluster</h1>
      <Show v={info}>
        {(i) => (
          <p class="muted">
            {i.server} · read as {i.readsAs || "(unknown)"}; approvals use your own token.
          </p>
        )}
      </Show>
      <h2>Operators</h2>
      <Show v={ops}>
        {(os) =>
          os.length === 0 ? (
            <p class="muted">No Operators.</p>
          ) : (
            <table class="list" data-testid="operators">
              <thead>
                <tr>
                  <th scope="col">Operator</th>
                  <th scope="col">Package / channel</th>
                  <th scope="col">Installed</th>
                  <th scope="col">Ready</th>
                  <th scope="col">Updates</th>
                  <th scope="col">Components</th>
                </tr>
              </thead>
              <tbody>
                {os.map((o) => (
                  <tr key={o.name}>
                    <td>{o.name}</td>
                    <td>
                      {o.package}
                      {o.channel ? ` / ${o.channel}` : ""}
                    </td>
                    <td>{o.installedVersion || o.installedBundle || "–"}</td>
                    <td>
                      <CondCell c={cond(o.conditions, "Installed")} />
                    </td>
                    <td>{o.updates.flatMap((u) => u.options).join(", ") || <span class="muted">none</span>}</td>
                    <td>
                      {o.components.length === 0 ? (
                        <span class="muted">none</span>
                      ) : (
                        <details>
                          <summary>{o.components.length}</summary>
                          <ul class="plain">
                            {o.components.map((c) => (
                              <li key={`${c.kind}/${c.namespace}/${c.name}`}>
                                {c.kind} {c.namespace ? `${c.namespace}/` : ""}
                                {c.name} {c.ready ? <span class="muted">{c.ready}</span> : null}
                              </li>
                            ))}
                          </ul>
                        </details>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
      <h2>Instances</h2>
      <Show v={insts}>{(is) => <Instances items={is} />}</Show>
    </section>
  );
}

function Instances({ items }: { items: UiInstance[] }) {
  if (items.length === 0) return <p class="muted">No Instances.</p>;
  return (
    <table class="list" data-testid="instances">
      <thead>
        <tr>
          <th scope="col">Instance</th>
          <th scope="col">Bundle</th>
          <th scope="col">Class</th>
          <th scope="col">Active</th>
          <th scope="col">Approved</th>
          <th scope="col">Installed</th>
        </tr>
      </thead>
      <tbody>
        {items.map((i) => (
          <tr key={i.name} class={i.awaitingApproval ? "awaiting" : ""}>
            <td>
              <a href={href(["cluster", "instances", i.name])}>{i.name}</a>
              {i.awaitingApproval ? <span class="badge">awaiting approval</span> : null}
            </td>
            <td>{i.bundle}</td>
            <td>{i.class || "–"}</td>
            <td>{i.activeBundle || "–"}</td>
            <td>
              <CondCell c={cond(i.conditions, "Approved")} />
            </td>
            <td>
              <CondCell c={cond(i.conditions, "Installed")} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const TOKEN_KEY = "opcat-kube-token";

export function InstancePage({ name }: { name: string }) {
  const [n, setN] = useState(0);
  const v = useLoad(() => api.instance(name), [name, n]);
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY) ?? "");
  const [result, setResult] = useState<{ ok: string } | { error: Error } | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const decide = (deny: boolean): void => {
    setBusy(true);
    setResult(undefined);
    api.decide(name, deny, token.trim()).then(
      (r) => {
        setResult({ ok: `${deny ? "Denied" : "Approved"} as ${r.by} (generation ${r.instance.generation}).` });
        setBusy(false);
        setN((x) => x + 1);
      },
      (error: Error) => {
        setResult({ error });
        setBusy(false);
      },
    );
  };
  return (
    <section>
      <nav class="crumbs" aria-label="breadcrumb">
        <a href={href(["cluster"])}>Cluster</a> / <span>Instance {name}</span>
      </nav>
      <h1>Instance {name}</h1>
      <Show v={v}>
        {(d) => (
          <>
            <p>
              Bundle <strong>{d.bundle}</strong>
              {d.class ? ` (class ${d.class})` : ""}; active: {d.activeBundle || "none"}.
            </p>
            <table class="list" data-testid="conditions">
              <thead>
                <tr>
                  <th scope="col">Condition</th>
                  <th scope="col">Status</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Message</th>
                </tr>
              </thead>
              <tbody>
                {d.conditions.map((c) => (
                  <tr key={c.type}>
                    <td>{c.type}</td>
                    <td>{c.status}</td>
                    <td>{c.reason}</td>
                    <td>{c.message}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {d.newPermissions ? (
              <>
                <h2>New permissions ({d.newPermissions.length})</h2>
                <ul class="plain mono" data-testid="grants">
                  {d.newPermissions.length === 0 ? <li>none</li> : d.newPermissions.map((p) => <li key={p}>{p}</li>)}
                </ul>
              </>
            ) : d.previewError ? (
              <p class="warning">Cannot show what it would create: {d.previewError}</p>
            ) : (
              <>
                <h2>Permissions it grants ({d.grants.length} rules)</h2>
                <ul class="plain mono" data-testid="grants">
                  {d.grants.map((g) => (
                    <li key={g}>{g}</li>
                  ))}
                </ul>
                <details>
                  <summary>Objects it creates ({d.objects.length})</summary>
                  <ul class="plain mono" data-testid="objects">
                    {d.objects.map((o) => (
                      <li key={`${o.kind}/${o.namespace}/${o.name}`}>
                        {o.kind} {o.namespace ? `${o.namespace}/` : ""}
                        {o.name}
                      </li>
                    ))}
                  </ul>
                </details>
              </>
            )}
            <form
              class="form"
              aria-label="approval"
              onSubmit={(e) => {
                e.preventDefault();
              }}
            >
              <label class="wide">
                <span>
                  Your Kubernetes bearer token (approving needs the <code>approve</code> verb on this Instance; it is
                  sent with the approval only, and kept in this tab)
                </span>
                <input
                  type="password"
                  name="token"
                  autocomplete="off"
                  value={token}
                  onInput={(e) => {
                    const t = (e.target as HTMLInputElement).value;
                    setToken(t);
                    sessionStorage.setItem(TOKEN_KEY, t);
                  }}
                />
              </label>
              <div>
                <button type="button" disabled={busy} onClick={() => decide(false)}>
                  Approve
                </button>{" "}
                <button type="button" class="secondary" disabled={busy} onClick={() => decide(true)}>
                  Deny
                </button>
              </div>
            </form>
            {result ? (
              "ok" in result ? (
                <p role="status" data-testid="decision">
                  {result.ok}
                </p>
              ) : (
                <ErrorBox error={result.error} />
              )
            ) : null}
          </>
        )}
      </Show>
    </section>
  );
}
