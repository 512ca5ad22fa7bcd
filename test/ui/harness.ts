/**
 * What the browser tests need: a real `opcat serve` (bin/opcat, the built dist/ and dist/ui) on
 * 127.0.0.1 and Debian's Chromium driven by playwright-core. Under CI=true a missing browser is a
 * failure (`.ci/run` installs the `chromium` package); elsewhere the tests skip saying why.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { REPO_ROOT } from "../shared.js";

export const CHROMIUM = process.env.OPCAT_CHROMIUM ?? "/usr/bin/chromium";

export function requireChromium(): { skip: false | string } {
  if (existsSync(CHROMIUM)) return { skip: false };
  const msg = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set OPCAT_CHROMIUM)`;
  if (process.env.CI === "true") throw new Error(`${msg}; under CI=true this is a failure`);
  return { skip: msg };
}

export function launchBrowser(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

export interface Served {
  /** The UI's URL, e.g. http://127.0.0.1:41234/ */
  url: string;
  /** Resolves with the first JSON log entry (from now on) for which `match` is true. */
  waitForLog(match: (entry: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Starts `opcat serve <args> --http 127.0.0.1:0 --no-grpc` and waits for its "serving" log line. */
export async function startServe(args: string[]): Promise<Served> {
  const child: ChildProcess = spawn(
    process.execPath,
    [join(REPO_ROOT, "bin", "opcat"), "serve", ...args, "--http", "127.0.0.1:0", "--no-grpc"],
    {
      cwd: REPO_ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const log: string[] = [];
  const waiters = new Set<{
    match: (e: Record<string, unknown>) => boolean;
    resolve: (e: Record<string, unknown>) => void;
  }>();
  const rl = createInterface({ input: child.stderr! });
  rl.on("line", (line) => {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    for (const w of waiters) {
      if (w.match(entry)) {
        waiters.delete(w);
        w.resolve(entry);
      }
    }
  });
  const url = await new Promise<string>((resolve, reject) => {
    rl.on("line", (line) => {
      log.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; ui?: string | null };
        if (entry.msg === "serving") {
          if (entry.ui) resolve(entry.ui);
          else reject(new Error(`opcat serve started without the UI:\n${log.join("\n")}`));
        }
      } catch {
        // not a JSON log line (problem reports): kept in the log
      }
    });
    void exited.then((code) => reject(new Error(`opcat serve exited (${code}) before serving:\n${log.join("\n")}`)));
  });
  return {
    url,
    waitForLog(match) {
      return new Promise((resolve, reject) => {
        waiters.add({ match, resolve });
        void exited.then((code) => reject(new Error(`opcat serve exited (${code}):\n${log.join("\n")}`)));
      });
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * A page that records script errors, Content-Security-Policy violations, dialogs and console errors
 * into `problems`, except the console errors `expected` accepts (the browser logs every non-2xx
 * answer, including the ones a test provokes and asserts on the page).
 */
export async function openPage(
  ctx: BrowserContext,
  problems: string[],
  expected: (text: string, url: string) => boolean = () => false,
): Promise<Page> {
  const page = await ctx.newPage();
  page.setDefaultTimeout(30_000);
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    const url = m.location().url ?? "";
    if (m.type() === "error" && !/status of 404/.test(m.text()) && !expected(m.text(), url))
      problems.push(`console error: ${m.text()} (${url})`);
    if (/Content.Security.Policy/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
  });
  page.on("dialog", (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  return page;
}

type Blob = { schema: string; name?: string; entries?: { name: string }[] };

/**
 * One package of a catalog, rendered to JSON blobs (`opcat render`) into a directory of its own, to
 * be served with `--watch` and changed: `withdraw` removes a bundle and its channel entries.
 */
export class CatalogCopy {
  readonly dir = mkdtempSync(join(tmpdir(), "opcat-ui-copy-"));
  readonly #blobs: Blob[];

  constructor(packageDir: string) {
    const out = execFileSync(process.execPath, [join(REPO_ROOT, "bin", "opcat"), "render", packageDir, "-o", "json"], {
      encoding: "utf8",
      maxBuffer: 64 << 20,
    });
    this.#blobs = JSON.parse(`[${out.replace(/}\n{/g, "},{")}]`) as Blob[];
    this.#write(this.#blobs);
  }

  withdraw(bundle: string): void {
    this.#write(
      this.#blobs
        .filter((b) => !(b.schema === "olm.bundle" && b.name === bundle))
        .map((b) =>
          b.schema === "olm.channel" ? { ...b, entries: (b.entries ?? []).filter((e) => e.name !== bundle) } : b,
        ),
    );
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  #write(blobs: Blob[]): void {
    writeFileSync(join(this.dir, "catalog.json"), blobs.map((b) => JSON.stringify(b)).join("\n") + "\n");
  }
}
