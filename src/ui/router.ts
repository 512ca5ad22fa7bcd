/** Hash routing: `#/path?query`, so that every view is a link and the server only serves `/`. */
import { useEffect, useState } from "preact/hooks";

export interface Route {
  parts: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const h = hash.replace(/^#/, "");
  const qi = h.indexOf("?");
  const path = qi < 0 ? h : h.slice(0, qi);
  const parts = path
    .split("/")
    .filter((p) => p !== "")
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  return { parts, query: new URLSearchParams(qi < 0 ? "" : h.slice(qi + 1)) };
}

export function href(parts: string[], query?: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== "") q.set(k, v);
  const qs = q.toString();
  return `#/${parts.map(encodeURIComponent).join("/")}${qs ? `?${qs}` : ""}`;
}

/** Replaces the current history entry (for state such as a search box, without filling the history). */
export function replaceHash(h: string): void {
  if (location.hash !== h) history.replaceState(null, "", h);
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = (): void => setHash(location.hash);
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return parseHash(hash);
}
