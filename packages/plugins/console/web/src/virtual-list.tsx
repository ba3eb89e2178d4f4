// A windowed list for long threads: only the rows in (and near) the viewport are in the DOM. Row heights are
// measured as rows render (ResizeObserver) and estimated until then; the list sticks to the bottom while the
// reader is there, so a streaming answer stays in view.
import { memo, type ReactNode, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { useT } from "./i18n";

interface Props<T> {
  items: readonly T[];
  itemKey(item: T): string;
  render(item: T): ReactNode;
  estimate?: number;
  label: string;
  /**
   * Called when the reader comes within a screen of the top (on scroll, and after each render there): the place
   * to load earlier rows. Rows added in front keep what is on screen where it is.
   */
  onReachTop?: (() => void) | undefined;
  /** Each new value takes the reader to the end (the page sent a message: its answer must be in view). */
  followToken?: number;
}

const OVERSCAN_PX = 400;

// A row's content re-renders only when its item (or the render function) changes, never because the list scrolled.
const RowContent = memo(function RowContent<T>({ item, render }: { item: T; render(item: T): ReactNode }): ReactNode {
  return render(item);
}) as <T>(props: { item: T; render(item: T): ReactNode }) => ReactNode;

export function VirtualList<T>({ items, itemKey, render, estimate = 72, label, onReachTop, followToken = 0 }: Props<T>): ReactNode {
  const t = useT();
  const scroller = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<string, number>());
  const [version, setVersion] = useState(0);
  const [view, setView] = useState({ top: 0, height: 800 });
  const atBottom = useRef(true);
  const snappedAt = useRef<number | null>(null);
  // The reader scrolled away from the end: a "Jump to latest" button takes them back (and the list stops following).
  const [away, setAway] = useState(false);

  const keys = useMemo(() => items.map(itemKey), [items, itemKey]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the signal that measured heights changed.
  const offsets = useMemo(() => {
    const out = new Float64Array(keys.length + 1);
    for (let i = 0; i < keys.length; i++) out[i + 1] = (out[i] ?? 0) + (heights.current.get(keys[i] ?? "") ?? estimate);
    return out;
  }, [keys, version, estimate]);
  const total = offsets[keys.length] ?? 0;

  // The first row whose bottom is below `y` (binary search over the prefix sums).
  const rowAt = useCallback(
    (y: number) => {
      let lo = 0;
      let hi = keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((offsets[mid + 1] ?? 0) <= y) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    },
    [offsets, keys.length],
  );
  const first = rowAt(Math.max(0, view.top - OVERSCAN_PX));
  const last = Math.min(keys.length, rowAt(view.top + view.height + OVERSCAN_PX) + 1);

  // What the resize observer needs of the current render: where each row is, and where the viewport starts.
  const layout = useRef({ keys, offsets, rowAt });
  layout.current = { keys, offsets, rowAt };
  const keyIndex = useMemo(() => new Map(keys.map((k, i) => [k, i])), [keys]);
  const indexOf = useRef(keyIndex);
  indexOf.current = keyIndex;

  const observer = useMemo(
    () =>
      typeof ResizeObserver === "undefined"
        ? null
        : new ResizeObserver((entries) => {
            let changed = false;
            // Rows above the viewport that turn out taller or shorter than estimated would push what the reader
            // is looking at; the scroll position moves by the same amount instead.
            const el = scroller.current;
            const topRow = el ? layout.current.rowAt(el.scrollTop) : 0;
            let shift = 0;
            for (const entry of entries) {
              const key = (entry.target as HTMLElement).dataset.key;
              if (key === undefined) continue;
              const h = Math.ceil(entry.borderBoxSize[0]?.blockSize ?? (entry.target as HTMLElement).offsetHeight);
              const before = heights.current.get(key);
              if (before !== h) {
                const index = indexOf.current.get(key);
                if (index !== undefined && index < topRow) shift += h - (before ?? estimate);
                heights.current.set(key, h);
                changed = true;
              }
            }
            if (el && shift !== 0 && !atBottom.current) el.scrollTop += shift;
            if (changed) setVersion((v) => v + 1);
          }),
    [estimate],
  );
  useEffect(() => () => observer?.disconnect(), [observer]);

  const measure = useCallback(
    (el: HTMLDivElement | null) => {
      if (!el || !observer) return;
      observer.observe(el);
      return () => observer.unobserve(el);
    },
    [observer],
  );

  // Scrolling re-renders only when the window of rows changes, not on every scroll event.
  const windowOf = useRef({ rowAt, first, last });
  windowOf.current = { rowAt, first, last };
  const reachTop = useRef(onReachTop);
  reachTop.current = onReachTop;
  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    if (el.scrollTop < el.clientHeight) reachTop.current?.();
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    snappedAt.current = atBottom.current ? el.scrollTop : null;
    setAway(!atBottom.current);
    const w = windowOf.current;
    const nextFirst = w.rowAt(Math.max(0, el.scrollTop - OVERSCAN_PX));
    const nextLast = w.rowAt(el.scrollTop + el.clientHeight + OVERSCAN_PX) + 1;
    if (nextFirst === w.first && nextLast === w.last) return;
    setView({ top: el.scrollTop, height: el.clientHeight });
  }, []);

  // Rows added in front (earlier messages): the row that was first is now at `index`, so the view moves down by
  // the height of what came in, before the browser paints.
  const firstKey = useRef<string | undefined>(undefined);
  useLayoutEffect(() => {
    const el = scroller.current;
    const previous = firstKey.current;
    firstKey.current = keys[0];
    if (!el || previous === undefined || previous === keys[0] || atBottom.current) return;
    const index = keyIndex.get(previous);
    if (index !== undefined && index > 0) {
      el.scrollTop += offsets[index] ?? 0;
      setView({ top: el.scrollTop, height: el.clientHeight });
    }
  }, [keys, keyIndex, offsets]);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    if (atBottom.current) {
      const max = el.scrollHeight - el.clientHeight;
      // Moved up since the last snap, and not by the browser clamping a shorter list: the reader scrolled away and
      // the scroll event has not arrived yet. Their position wins.
      if (snappedAt.current !== null && el.scrollTop < snappedAt.current - 2 && el.scrollTop < max - 2) atBottom.current = false;
      else {
        el.scrollTop = el.scrollHeight;
        snappedAt.current = el.scrollTop;
      }
    }
    if (el.clientHeight !== view.height) setView({ top: el.scrollTop, height: el.clientHeight });
  });

  const jumpToLatest = useCallback(() => {
    const el = scroller.current;
    atBottom.current = true;
    snappedAt.current = null;
    setAway(false);
    if (el) {
      el.scrollTop = el.scrollHeight;
      setView({ top: el.scrollTop, height: el.clientHeight });
    }
  }, []);
  useLayoutEffect(() => {
    if (followToken > 0) jumpToLatest();
  }, [followToken, jumpToLatest]);

  // Near the top after a render (a short thread, or a page that did not fill the screen): ask for more.
  useEffect(() => {
    const el = scroller.current;
    if (el && el.scrollTop < el.clientHeight) reachTop.current?.();
  });

  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) {
    const item = items[i] as T;
    const key = keys[i] ?? String(i);
    rows.push(
      <div key={key} data-key={key} ref={measure} className="vrow" style={{ transform: `translateY(${offsets[i] ?? 0}px)` }}>
        <RowContent item={item} render={render} />
      </div>,
    );
  }
  return (
    <div className="vlist-wrap">
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable to scroll it by keyboard. */}
      <div ref={scroller} className="vlist" onScroll={onScroll} tabIndex={0} role="log" aria-label={label} data-rows={keys.length}>
        <div className="vspace" style={{ height: total }}>
          {rows}
        </div>
      </div>
      {away ? (
        <button type="button" className="jump-latest" onClick={jumpToLatest}>
          {t("vlist.jump")}
        </button>
      ) : null}
    </div>
  );
}
