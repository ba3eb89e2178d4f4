// Keyboard behaviour shared by the cards and panels: Escape closes what is open, and focus goes back to the control
// that opened it, so a keyboard or screen reader user is never left on a control that just went away.
import type { KeyboardEvent } from "react";
import { useEffect, useRef } from "react";

/**
 * A keydown handler that calls `close` on Escape. It stops the key there, so a drawer around the card stays open
 * (the drawer listens on the window): one Escape closes one thing.
 */
export function closeOnEscape(close: () => void): (e: KeyboardEvent<HTMLElement>) => void {
  return (e) => {
    if (e.key !== "Escape" || e.defaultPrevented) return;
    e.preventDefault();
    e.stopPropagation();
    close();
  };
}

/** A ref for the control that opens something: it gets the focus back when `open` goes from true to false. */
export function useReturnFocus<T extends HTMLElement>(open: boolean) {
  const opener = useRef<T>(null);
  const wasOpen = useRef(open);
  useEffect(() => {
    if (wasOpen.current && !open) opener.current?.focus();
    wasOpen.current = open;
  }, [open]);
  return opener;
}

/** A ref for the field that takes the focus when its editor opens (instead of autoFocus, which fires on every mount). */
export function useFocusOnOpen<T extends HTMLElement>(open: boolean) {
  const field = useRef<T>(null);
  useEffect(() => {
    if (open) field.current?.focus();
  }, [open]);
  return field;
}

/**
 * Arrow keys, Home and End for a tab list (the roving tabindex pattern: only the selected tab is in the Tab order,
 * and the arrows move the selection and the focus along the list, wrapping at the ends).
 */
export function tabListKeys<K extends string>(tabs: readonly K[], selected: K, select: (tab: K) => void) {
  return (e: KeyboardEvent<HTMLElement>) => {
    const at = tabs.indexOf(selected);
    let next: number;
    if (e.key === "ArrowRight" || e.key === "ArrowDown") next = (at + 1) % tabs.length;
    else if (e.key === "ArrowLeft" || e.key === "ArrowUp") next = (at - 1 + tabs.length) % tabs.length;
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = tabs.length - 1;
    else return;
    e.preventDefault();
    const tab = tabs[next] as K;
    select(tab);
    e.currentTarget.querySelector<HTMLElement>(`[data-tab="${tab}"]`)?.focus();
  };
}

/** Where the skip link takes the focus: the message box in a thread, else the page's heading, else the thread list. */
export function skipToContent(): void {
  const candidates = [
    document.getElementById("composer-input"),
    document.querySelector<HTMLElement>("main h1"),
    document.querySelector<HTMLElement>("nav.threads button.primary"),
  ];
  const target = candidates.find((el): el is HTMLElement => el !== null && el.getClientRects().length > 0);
  if (!target) return;
  if (target.tagName === "H1") target.tabIndex = -1;
  target.focus();
}
