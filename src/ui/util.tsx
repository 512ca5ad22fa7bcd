/** Small shared pieces: loading data, errors, copy buttons, the blob viewer, Markdown. */
import MarkdownIt from "markdown-it";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { ComponentChildren } from "preact";
import { stringifyYaml12 } from "../yaml/yaml12.js";
import { ApiFailure } from "./api.js";

export type Loaded<T> = { state: "loading" } | { state: "error"; error: Error } | { state: "ok"; value: T };

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [v, setV] = useState<Loaded<T>>({ state: "loading" });
  useEffect(() => {
    let live = true;
    setV({ state: "loading" });
    load().then(
      (value) => live && setV({ state: "ok", value }),
      (error: Error) => live && setV({ state: "error", error }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return v;
}

export function ErrorBox({ error }: { error: Error }) {
  return (
    <div class="error" role="alert">
      {error instanceof ApiFailure ? <code class="code">{error.code}</code> : null} {error.message}
    </div>
  );
}

export function Show<T>({ v, children }: { v: Loaded<T>; children: (value: T) => ComponentChildren }) {
  if (v.state === "loading")
    return (
      <p class="muted" aria-busy="true">
        Loading…
      </p>
    );
  if (v.state === "error") return <ErrorBox error={v.error} />;
  return <>{children(v.value)}</>;
}

export function CopyButton({ text, label = "Copy" }: { text: () => string; label?: string }) {
  const [done, setDone] = useState("");
  return (
    <button
      type="button"
      class="small"
      onClick={() => {
        navigator.clipboard.writeText(text()).then(
          () => setDone("Copied"),
          () => setDone("Copy failed: select the text instead"),
        );
      }}
    >
      {label}
      {done ? (
        <span class="copied" role="status">
          {" "}
          · {done}
        </span>
      ) : null}
    </button>
  );
}

export function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * A `<details>` whose content is made only once it is first opened (a package blob with a
 * description of megabytes costs nothing until someone looks at it).
 */
export function Fold({ summary, children }: { summary: ComponentChildren; children: () => ComponentChildren }) {
  const [opened, setOpened] = useState(false);
  return (
    <details onToggle={(e) => (e.currentTarget as HTMLDetailsElement).open && setOpened(true)}>
      <summary>{summary}</summary>
      {opened ? children() : null}
    </details>
  );
}

/** Blob text longer than this is shown cut there, with a button for the rest (copy takes it all). */
export const BLOB_SHOWN = 256 * 1024;

/** A catalog blob as YAML or JSON, with a copy button. */
export function BlobView({ blob, title }: { blob: unknown; title?: string }) {
  const [format, setFormat] = useState<"yaml" | "json">("yaml");
  const [whole, setWhole] = useState(false);
  const text = useMemo(
    () => (format === "json" ? JSON.stringify(blob, null, 2) : stringifyYaml12(blob)),
    [blob, format],
  );
  const cut = !whole && text.length > BLOB_SHOWN;
  return (
    <div class="blob">
      <div class="blob-bar">
        {title ? <strong>{title}</strong> : null}
        <span class="seg" role="group" aria-label="format">
          <button type="button" class="small" aria-pressed={format === "yaml"} onClick={() => setFormat("yaml")}>
            YAML
          </button>
          <button type="button" class="small" aria-pressed={format === "json"} onClick={() => setFormat("json")}>
            JSON
          </button>
        </span>
        <CopyButton text={() => text} />
      </div>
      <pre class="blob-text" tabIndex={0}>
        {cut ? text.slice(0, BLOB_SHOWN) : text}
      </pre>
      {cut ? (
        <button type="button" class="small" onClick={() => setWhole(true)}>
          Show all ({sizeText(text.length)}; {sizeText(text.length - BLOB_SHOWN)} more)
        </button>
      ) : null}
    </div>
  );
}

// Raw HTML in catalog Markdown is escaped (html: false) and links are limited to safe schemes by
// markdown-it's validateLink (no javascript:, vbscript:, file:, and data: only for images).
const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
const defaultLink = md.renderer.rules.link_open;
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet("rel", "noopener noreferrer nofollow");
  tokens[idx].attrSet("target", "_blank");
  return defaultLink ? defaultLink(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options);
};

/** One line of Markdown (a package's summary) rendered inline, safely: emphasis, code and links, no blocks. */
export function MarkdownInline({ text, class: cls }: { text: string; class?: string }) {
  const html = useMemo(() => md.renderInline(text), [text]);
  return <span class={cls} dangerouslySetInnerHTML={{ __html: html }} />;
}

/** Markdown is rendered in parts of about this many characters, the next as the reader nears the end. */
export const MARKDOWN_PART = 16 * 1024;

/**
 * Where the part of a long Markdown text that begins at `start` ends: at a blank line at least `size`
 * characters on, outside fenced code blocks (a part is valid Markdown on its own, but for a reference
 * link whose definition is in another part).
 */
export function markdownPartEnd(text: string, start: number, size = MARKDOWN_PART): number {
  if (text.length - start <= size) return text.length;
  let cut = text.indexOf("\n\n", start + size);
  // inside a fence when an odd number of fence lines lie between the part's start and the cut
  while (cut >= 0 && fencesBetween(text, start, cut) % 2 === 1) {
    const close = nextFence(text, cut);
    cut = close < 0 ? -1 : text.indexOf("\n\n", close);
  }
  return cut < 0 ? text.length : cut + 2;
}

const FENCE = /^ {0,3}(```|~~~)/gm;

function fencesBetween(text: string, from: number, to: number): number {
  FENCE.lastIndex = from;
  let n = 0;
  for (let m = FENCE.exec(text); m && m.index < to; m = FENCE.exec(text)) n++;
  return n;
}

function nextFence(text: string, from: number): number {
  FENCE.lastIndex = from;
  const m = FENCE.exec(text);
  return m ? m.index : -1;
}

/**
 * A Markdown text, rendered safely. A long one (a description of megabytes) is rendered a part at a
 * time: the first part at once, each next one when the reader scrolls near the end of what is drawn
 * (or asks for it with the button), so that the page opens as fast as for a short one.
 */
export function Markdown({ text }: { text: string }) {
  const [drawn, setDrawn] = useState(1);
  useEffect(() => setDrawn(1), [text]);
  // where the parts end and their HTML, found and rendered once each, as they are drawn
  const ends = useMemo((): number[] => [], [text]);
  const rendered = useMemo(() => new Map<number, string>(), [text]);
  const parts: string[] = [];
  for (let i = 0; i < drawn; i++) {
    const start = i === 0 ? 0 : ends[i - 1];
    if (i > 0 && start >= text.length) break;
    if (i === ends.length) ends.push(markdownPartEnd(text, start));
    let html = rendered.get(i);
    if (html === undefined) rendered.set(i, (html = md.render(text.slice(start, ends[i]))));
    parts.push(html);
  }
  const more = useRef<HTMLButtonElement>(null);
  const left = text.length - ends[parts.length - 1];
  useEffect(() => {
    const el = more.current;
    if (!el || typeof IntersectionObserver === "undefined") return;
    const io = new IntersectionObserver((es) => es.some((e) => e.isIntersecting) && setDrawn((n) => n + 1), {
      rootMargin: "800px",
    });
    io.observe(el);
    return () => io.disconnect();
  }, [drawn, ends]);
  if (parts.length === 1 && left === 0) return <div class="markdown" dangerouslySetInnerHTML={{ __html: parts[0] }} />;
  return (
    <div class="markdown">
      {parts.map((html, i) => (
        <div key={i} class="markdown-part" dangerouslySetInnerHTML={{ __html: html }} />
      ))}
      {left > 0 ? (
        <button type="button" class="small more" ref={more} onClick={() => setDrawn((n) => n + 1)}>
          Show more ({sizeText(left)} of {sizeText(text.length)} left)
        </button>
      ) : null}
    </div>
  );
}

/** A length in characters as people read sizes: 950 characters, 12 KB, 9.5 MB. */
export function sizeText(n: number): string {
  if (n < 1000) return `${n} characters`;
  if (n < 1e6) return `${Math.round(n / 1000)} KB`;
  return `${(n / 1e6).toFixed(1)} MB`;
}

export { bundleVersion, props, str } from "../web/uiblob.js";
