// The colour theme: "system" follows the browser's prefers-color-scheme (the CSS does that by itself); "light" and
// "dark" pin one. The choice lives in localStorage under THEME_KEY; the inline script in index.html reads it and
// sets data-theme on <html> before the first paint, so a pinned theme never flashes the other one first.
import { useCallback, useState } from "react";

export type ThemeChoice = "system" | "light" | "dark";
export const THEME_KEY = "antler.console.theme";

function readChoice(): ThemeChoice {
  try {
    const stored = localStorage.getItem(THEME_KEY);
    return stored === "light" || stored === "dark" ? stored : "system";
  } catch {
    return "system"; // storage blocked: the system setting it is
  }
}

/** `[choice, choose]`: choosing applies the theme at once and keeps it for the next visit. */
export function useTheme(): [ThemeChoice, (choice: ThemeChoice) => void] {
  const [choice, setChoice] = useState<ThemeChoice>(readChoice);
  const choose = useCallback((next: ThemeChoice) => {
    setChoice(next);
    const root = document.documentElement;
    if (next === "system") delete root.dataset.theme;
    else root.dataset.theme = next;
    try {
      if (next === "system") localStorage.removeItem(THEME_KEY);
      else localStorage.setItem(THEME_KEY, next);
    } catch {
      // Storage blocked: the choice holds for this page only.
    }
  }, []);
  return [choice, choose];
}
