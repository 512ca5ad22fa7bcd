import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, getJson } from "./api.js";
import { CatalogList, PackageList } from "./catalogs.js";
import { ChangesPage } from "./changes.js";
import { ClusterPage, InstancePage } from "./cluster.js";
import { PackagePage } from "./package.js";
import { ResolvePage } from "./resolve.js";
import { TemplatePage } from "./template.js";
import { href, replaceHash, useRoute } from "./router.js";
import "./style.css";

type Theme = "light" | "dark";

function initialTheme(): Theme {
  const saved = localStorage.getItem("opcat-theme");
  if (saved === "light" || saved === "dark") return saved;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

const MIB = 1024 * 1024;
/** How often the status line asks the server for its memory. */
const STATUS_EVERY_MS = 15_000;

/** The status line: the server's memory (resident set, V8 heap), refreshed while the page is open. */
function StatusLine() {
  const [text, setText] = useState("");
  useEffect(() => {
    let live = true;
    const mib = (n: number) => `${Math.round(n / MIB)} MiB`;
    const load = () =>
      api.status().then(
        (s) => {
          const m = s.memory;
          if (live) setText(`server memory: ${mib(m.rss)} resident, heap ${mib(m.heapUsed)} of ${mib(m.heapTotal)}`);
        },
        () => live && setText(""),
      );
    void load();
    const t = setInterval(load, STATUS_EVERY_MS);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, []);
  return (
    <footer class="status-line" data-testid="status-line">
      {text}
    </footer>
  );
}

function App() {
  const route = useRoute();
  const [theme, setTheme] = useState<Theme>(initialTheme);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  const [section, catalog, , pkg] = route.parts;
  // the Cluster link shows when the server was started with --kubeconfig
  const [hasCluster, setHasCluster] = useState(false);
  useEffect(() => {
    getJson<{ cluster: boolean }>("/ui/api/config").then(
      (c) => setHasCluster(c.cluster),
      () => setHasCluster(false),
    );
  }, []);

  // With one catalog served, `/` opens straight on its package list.
  useEffect(() => {
    if (route.parts.length > 0) return;
    let live = true;
    api.catalogs().then(
      (cs) => {
        if (live && cs.length === 1 && location.hash.replace(/^#\/?/, "") === "") replaceHash(href(["c", cs[0].name]));
        else if (live) replaceHash(href(["catalogs"]));
      },
      () => live && replaceHash(href(["catalogs"])),
    );
    return () => {
      live = false;
    };
  }, [route.parts.length]);

  let page;
  if (section === "catalogs") page = <CatalogList />;
  else if (section === "c" && catalog && route.parts[2] === "p" && pkg)
    page = <PackagePage catalog={catalog} pkg={pkg} query={route.query} />;
  else if (section === "c" && catalog && route.parts[2] === "changes") page = <ChangesPage catalog={catalog} />;
  else if (section === "c" && catalog) page = <PackageList catalog={catalog} query={route.query} />;
  else if (section === "resolve") page = <ResolvePage query={route.query} />;
  else if (section === "template") page = <TemplatePage />;
  else if (section === "cluster" && route.parts[1] === "instances" && route.parts[2])
    page = <InstancePage name={route.parts[2]} />;
  else if (section === "cluster") page = <ClusterPage />;
  else if (route.parts.length === 0) page = <p class="muted">Loading…</p>;
  else
    page = (
      <p class="error" role="alert">
        No such page. <a href={href(["catalogs"])}>Catalogs</a>
      </p>
    );

  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById("main")?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href(["catalogs"])}>
          opcat
        </a>
        <nav aria-label="main">
          <a href={href(["catalogs"])} aria-current={section === "catalogs" || section === "c" ? "page" : undefined}>
            Catalogs
          </a>
          <a href={href(["resolve"])} aria-current={section === "resolve" ? "page" : undefined}>
            Resolve
          </a>
          <a href={href(["template"])} aria-current={section === "template" ? "page" : undefined}>
            Templates
          </a>
          {hasCluster ? (
            <a href={href(["cluster"])} aria-current={section === "cluster" ? "page" : undefined}>
              Cluster
            </a>
          ) : null}
        </nav>
        <button
          type="button"
          class="small theme"
          aria-label={`switch to ${theme === "dark" ? "light" : "dark"} theme`}
          onClick={() => {
            const t: Theme = theme === "dark" ? "light" : "dark";
            localStorage.setItem("opcat-theme", t);
            setTheme(t);
          }}
        >
          {theme === "dark" ? "☀ Light" : "☾ Dark"}
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
      <StatusLine />
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
