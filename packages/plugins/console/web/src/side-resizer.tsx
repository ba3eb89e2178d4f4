import type { PointerEvent, ReactNode, RefObject } from "react";
import { useT } from "./i18n";

const MIN = 280;
const STEP = 40;

/** The widest the details panel may get: the chat keeps at least 360 px. */
const maxWidth = (layout: HTMLElement | null) => Math.max(MIN, (layout?.clientWidth ?? 1200) - 360);

/**
 * The handle on the details panel's inner edge: drag it, or focus it and press the arrow keys (Home and End jump
 * to the narrowest and widest), to make the panel wider or narrower. Hidden where the panel is a drawer.
 */
export function SideResizer({
  layout,
  width,
  onWidth,
}: {
  layout: RefObject<HTMLDivElement | null>;
  width: number | null;
  onWidth(width: number): void;
}): ReactNode {
  const t = useT();
  const current = width ?? layout.current?.querySelector<HTMLElement>(".side")?.offsetWidth ?? 380;
  const clamp = (w: number) => Math.round(Math.min(maxWidth(layout.current), Math.max(MIN, w)));
  const fromPointer = (e: PointerEvent<HTMLDivElement>) => {
    const box = layout.current?.getBoundingClientRect();
    if (box) onWidth(clamp(box.right - e.clientX));
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: an <hr> cannot be focused and dragged; a focusable separator is the ARIA pattern
    <div
      className="side-resizer"
      role="separator"
      aria-orientation="vertical"
      aria-label={t("side.resize")}
      aria-valuemin={MIN}
      aria-valuemax={maxWidth(layout.current)}
      aria-valuenow={Math.round(current)}
      tabIndex={0}
      onPointerDown={(e) => {
        e.currentTarget.setPointerCapture(e.pointerId);
        fromPointer(e);
      }}
      onPointerMove={(e) => {
        if (e.currentTarget.hasPointerCapture(e.pointerId)) fromPointer(e);
      }}
      onKeyDown={(e) => {
        const next =
          e.key === "ArrowLeft"
            ? current + STEP
            : e.key === "ArrowRight"
              ? current - STEP
              : e.key === "Home"
                ? MIN
                : e.key === "End"
                  ? maxWidth(layout.current)
                  : null;
        if (next === null) return;
        e.preventDefault();
        onWidth(clamp(next));
      }}
    />
  );
}
