/**
 * opcat against a real opm, side by side (`OPM=/path/to/opm npm run bench`, or BENCH_ONLY=vsopm): the
 * same command on the same real input (../shared/data community catalogs and bundle directories),
 * paired runs alternating the two tools, CPU time (user + system, from /usr/bin/time) and peak RSS;
 * prints the medians and the opcat/opm ratios as a Markdown table. Without OPM it says so and exits.
 * Both outputs are also compared: a speed figure for different answers would mean nothing.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { COMMUNITY } from "../test/shared.js";
import { median } from "./shared.js";

const opm = process.env.OPM;
if (!opm) {
  console.log("vsopm: set OPM=/path/to/opm to compare opcat with a real opm (see docs/benchmarks.md)");
  process.exit(0);
}
const root = join(import.meta.dirname, "..");
// bin/opcat run as users run it (its shebang sets the V8 flags), with this Node first on PATH.
const opcat = [join(root, "bin", "opcat")];
process.env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;
const runs = Number(process.env.BENCH_RUNS ?? 5);

interface Sample {
  cpu: number;
  rss: number;
  out: string;
}

function measure(cmd: string[], env?: NodeJS.ProcessEnv): Sample {
  const r = spawnSync("/usr/bin/time", ["-f", "%U %S %M", ...cmd], { encoding: "utf8", maxBuffer: 1 << 30, env });
  const last = r.stderr.trim().split("\n").pop() ?? "";
  const [u, s, m] = last.split(" ").map(Number);
  return { cpu: u + s, rss: m / 1024, out: r.stdout };
}

/** A Node older than 22 on this machine (as a new user's), whose directory goes first on PATH for the rows that
 * measure bin/opcat started on it (it then runs the Node 24 in .node/), or undefined. */
function oldNodeDir(): string | undefined {
  for (const dir of ["/usr/bin", "/usr/local/bin", "/bin"]) {
    const r = spawnSync(join(dir, "node"), ["--version"], { encoding: "utf8" });
    if (r.status === 0 && Number(/^v(\d+)/.exec(r.stdout)?.[1] ?? 99) < 22) return dir;
  }
  return undefined;
}
const OLD = oldNodeDir();
const onOld = OLD ? { ...process.env, PATH: `${OLD}:${process.env.PATH}` } : undefined;

const cat = (v: string) => join(COMMUNITY, "catalogs", v);
const bundleDir = join(COMMUNITY, "operators", "rabbitmq-cluster-operator", "2.9.0");
const small = join(root, "examples", "catalog");
const cases: {
  name: string;
  args: (tool: "opm" | "opcat") => string[];
  compare?: boolean;
  /** opcat's environment (default: this one) */
  env?: NodeJS.ProcessEnv;
}[] = [
  { name: "--version (start-up)", args: (t) => (t === "opm" ? ["version"] : ["--version"]), compare: false },
  { name: "validate a small catalog (examples/catalog)", args: () => ["validate", small], compare: false },
  {
    name: "render one bundle directory (rabbitmq-cluster-operator 2.9.0)",
    args: () => ["render", bundleDir, "-o", "json"],
  },
  ...(onOld
    ? [
        {
          name: "validate a small catalog, an older Node first on PATH",
          args: () => ["validate", small],
          compare: false,
          env: onOld,
        },
        {
          name: "render one bundle directory, an older Node first on PATH",
          args: () => ["render", bundleDir, "-o", "json"],
          env: onOld,
        },
      ]
    : []),
  {
    name: "render-graph of one package (v4.20, rabbitmq-cluster-operator)",
    args: (t) => [...(t === "opm" ? ["alpha"] : []), "render-graph", cat("v4.20"), "-p", "rabbitmq-cluster-operator"],
  },
  { name: "validate v4.16", args: () => ["validate", cat("v4.16")], compare: false },
  { name: "validate v4.20", args: () => ["validate", cat("v4.20")], compare: false },
  { name: "render v4.20 -o json", args: () => ["render", cat("v4.20"), "-o", "json"] },
  { name: "render v4.20 -o yaml", args: () => ["render", cat("v4.20"), "-o", "yaml"] },
  {
    name: "render-graph of v4.20 (every package)",
    args: (t) => [...(t === "opm" ? ["alpha"] : []), "render-graph", cat("v4.20")],
  },
];

console.log(
  `| opcat vs opm (${runs} paired runs, medians; CPU = user + system) | ` +
    `opcat CPU s | opm CPU s | CPU ratio | opcat RSS MiB | opm RSS MiB | same output |`,
);
console.log("|---|---|---|---|---|---|---|");
for (const c of cases) {
  const a: Sample[] = [];
  const b: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    a.push(measure([...opcat, ...c.args("opcat")], c.env));
    b.push(measure([opm, ...c.args("opm")]));
  }
  const same = c.compare === false ? "n/a" : a[0].out === b[0].out ? "yes" : "NO";
  const ca = median(a.map((x) => x.cpu));
  const cb = median(b.map((x) => x.cpu));
  console.log(
    `| ${c.name} | ${ca.toFixed(2)} | ${cb.toFixed(2)} | ${(ca / cb).toFixed(2)} | ` +
      `${median(a.map((x) => x.rss)).toFixed(0)} | ${median(b.map((x) => x.rss)).toFixed(0)} | ${same} |`,
  );
}
