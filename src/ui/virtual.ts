/**
 * A window-scrolled virtualizer for Preact over TanStack Virtual's framework-agnostic core (what its
 * React adapter's `useWindowVirtualizer` does, without React): only the rows near the viewport are
 * rendered, the list keeps the height of all of them.
 */
import {
  observeWindowOffset,
  observeWindowRect,
  Virtualizer,
  type VirtualizerOptions,
  windowScroll,
} from "@tanstack/virtual-core";
import { useLayoutEffect, useReducer, useState } from "preact/hooks";

export type WindowVirtualizer = Virtualizer<Window, Element>;

type Options = Pick<VirtualizerOptions<Window, Element>, "count" | "estimateSize" | "overscan" | "scrollMargin">;

export function useWindowVirtualizer(options: Options): WindowVirtualizer {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const resolved: VirtualizerOptions<Window, Element> = {
    getScrollElement: () => window,
    observeElementRect: observeWindowRect,
    observeElementOffset: observeWindowOffset,
    scrollToFn: windowScroll,
    initialOffset: () => window.scrollY,
    ...options,
    onChange: () => rerender(0),
  };
  const [v] = useState(() => new Virtualizer<Window, Element>(resolved));
  v.setOptions(resolved);
  useLayoutEffect(() => v._didMount(), [v]);
  useLayoutEffect(() => v._willUpdate());
  return v;
}
