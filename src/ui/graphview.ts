/**
 * Zoom and pan of the upgrade graph: the view (offset and scale), fitted to the viewport once laid
 * out, moved by the wheel, by dragging, by the keyboard and by the toolbar's buttons.
 */
import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Layout } from "./graphmodel.js";

export interface View {
  x: number;
  y: number;
  k: number;
}

/** The viewport's event handlers. */
export interface ViewportHandlers {
  onWheel: (e: WheelEvent) => void;
  onPointerDown: (e: PointerEvent) => void;
  onPointerMove: (e: PointerEvent) => void;
  onPointerUp: () => void;
  onKeyDown: (e: KeyboardEvent) => void;
}

export interface ViewControl {
  view: View;
  /** Whether the view is moving (the drawn layer kept composited until it rests). */
  moving: boolean;
  /** Fits the graph into the viewport. */
  fit: () => void;
  /** Zooms by `factor` around (cx, cy) of the viewport. */
  zoomAt: (factor: number, cx: number, cy: number) => void;
  handlers: ViewportHandlers;
}

/**
 * The smallest scale a fitted view uses: the bundle labels (12 and 10 px) stay readable (at least 9.6 and
 * 8 px on screen). A graph larger than the viewport at this scale opens at its top left, and is panned
 * (drag, arrow keys) or zoomed out (−, the wheel) to see the rest.
 */
export const MIN_FIT_SCALE = 0.8;

/** The view fitting a `layout` into a viewport of `width` × `height`, never below {@link MIN_FIT_SCALE}. */
export function fitView(layout: Layout, width: number, height: number): View {
  const whole = Math.min((width - 20) / Math.max(1, layout.width), (height - 20) / Math.max(1, layout.height));
  const k = Math.min(1.5, Math.max(MIN_FIT_SCALE, whole));
  const place = (room: number, size: number): number => (size * k <= room - 20 ? (room - size * k) / 2 : 0);
  return { k, x: place(width, layout.width), y: place(height, layout.height) };
}

/** The view zoomed by `factor` around (cx, cy). */
export function zoomedView(v: View, factor: number, cx: number, cy: number): View {
  const k = Math.min(4, Math.max(0.03, v.k * factor));
  return { k, x: cx - ((cx - v.x) * k) / v.k, y: cy - ((cy - v.y) * k) / v.k };
}

/** What a key does to the view: a zoom factor, a pan, or nothing. */
export function keyMove(key: string): { zoom: number } | { dx: number; dy: number } | undefined {
  const step = 40;
  if (key === "+" || key === "=") return { zoom: 1.2 };
  if (key === "-") return { zoom: 1 / 1.2 };
  if (key === "ArrowLeft") return { dx: step, dy: 0 };
  if (key === "ArrowRight") return { dx: -step, dy: 0 };
  if (key === "ArrowUp") return { dx: 0, dy: step };
  if (key === "ArrowDown") return { dx: 0, dy: -step };
  return undefined;
}

/** The view of `layout` in the viewport `viewportRef`, refitted whenever the layout changes. */
export function useViewControl(layout: Layout | undefined, viewportRef: RefObject<HTMLDivElement | null>): ViewControl {
  const [view, setView] = useState<View>({ x: 10, y: 10, k: 1 });
  // Zoom and pan move the drawn SVG as one composited layer (a CSS transform on the <svg>, which
  // the browser moves and scales without painting its thousands of paths again); while it moves
  // the layer is kept (will-change), and re-rasterised sharp at the new scale once it rests.
  const [moving, setMoving] = useState(false);
  const rest = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const moved = (): void => {
    setMoving(true);
    clearTimeout(rest.current);
    rest.current = setTimeout(() => setMoving(false), 200);
  };
  useEffect(() => () => clearTimeout(rest.current), []);

  // fit the graph into the view once laid out
  const fit = (): void => {
    const box = viewportRef.current;
    if (!box || !layout) return;
    const r = box.getBoundingClientRect();
    setView(fitView(layout, r.width, r.height));
  };
  useEffect(fit, [layout]);

  const zoomAt = (factor: number, cx: number, cy: number): void => {
    moved();
    setView((v) => zoomedView(v, factor, cx, cy));
  };
  const pan = (dx: number, dy: number): void => {
    moved();
    setView((v) => ({ ...v, x: v.x + dx, y: v.y + dy }));
  };
  const handlers = useViewportHandlers(view, setView, moved, zoomAt, pan);
  return { view, moving, fit, zoomAt, handlers };
}

/** The viewport's wheel (zoom), drag (pan) and keyboard (zoom and pan) handlers. */
function useViewportHandlers(
  view: View,
  setView: (f: (v: View) => View) => void,
  moved: () => void,
  zoomAt: (factor: number, cx: number, cy: number) => void,
  pan: (dx: number, dy: number) => void,
): ViewportHandlers {
  const drag = useRef<{ x: number; y: number; vx: number; vy: number } | undefined>(undefined);
  return {
    onWheel: (e) => {
      e.preventDefault();
      const r = (e.currentTarget as HTMLDivElement).getBoundingClientRect();
      zoomAt(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - r.left, e.clientY - r.top);
    },
    onPointerDown: (e) => {
      if ((e.target as Element).closest(".node")) return;
      drag.current = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y };
      (e.currentTarget as HTMLDivElement).setPointerCapture(e.pointerId);
    },
    onPointerMove: (e) => {
      const d = drag.current;
      if (!d) return;
      moved();
      setView((v) => ({ ...v, x: d.vx + e.clientX - d.x, y: d.vy + e.clientY - d.y }));
    },
    onPointerUp: () => (drag.current = undefined),
    onKeyDown: (e) => {
      const m = keyMove(e.key);
      if (!m) return;
      if ("zoom" in m) zoomAt(m.zoom, 300, 200);
      else pan(m.dx, m.dy);
      e.preventDefault();
    },
  };
}
