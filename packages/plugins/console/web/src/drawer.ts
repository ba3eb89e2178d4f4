// A panel that slides over the page on a phone: Escape closes it, focus moves into it when it opens and back to
// what opened it when it closes, so a keyboard or screen reader user is never left on a hidden control.
import { useEffect, useRef, useState } from "react";

/** `[open, setOpen]` for a drawer whose first control matches `firstControl` (a CSS selector). */
export function useDrawer(firstControl: string): [boolean, (open: boolean) => void] {
  const [open, setOpen] = useState(false);
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    if (!open) return;
    opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    document.querySelector<HTMLElement>(firstControl)?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setOpen(false);
    };
    addEventListener("keydown", onKey);
    return () => {
      removeEventListener("keydown", onKey);
      if (opener.current?.isConnected) opener.current.focus();
    };
  }, [open, firstControl]);
  return [open, setOpen];
}
