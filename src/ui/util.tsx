/** Small shared pieces: loading data, errors, copy buttons, the blob viewer, Markdown. */
import MarkdownIt from "markdown-it";
import { useEffect, useMemo, useState } from "preact/hooks";
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

/** A catalog blob as YAML or JSON, with a copy button. */
export function BlobView({ blob, title }: { blob: unknown; title?: string }) {
  const [format, setFormat] = useState<"yaml" | "json">("yaml");
  const text = useMemo(
    () => (format === "json" ? JSON.stringify(blob, null, 2) : stringifyYaml12(blob)),
    [blob, format],
  );
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
        {text}
      </pre>
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

export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => md.render(text), [text]);
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}

export function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

export function props(b: Record<string, unknown>): { type: string; value: unknown }[] {
  return Array.isArray(b.properties) ? (b.properties as { type: string; value: unknown }[]) : [];
}

export function bundleVersion(b: Record<string, unknown>): string {
  for (const p of props(b))
    if (p.type === "olm.package") return str((p.value as Record<string, unknown> | null)?.version);
  return "";
}
