// The console's words: one catalog per language (messages/en.ts is the reference, every other language has the
// same keys), the language from the reader's choice or else the browser's, and a switch in the top bar. English is
// in the first screen's bundle; another language's catalog is loaded on demand.
import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from "react";
import { en, type MessageKey } from "./messages/en";

export type { MessageKey };
export type Catalog = Readonly<Record<MessageKey, string>>;
export type Lang = "en" | "zh";
export const LANGS: readonly Lang[] = ["en", "zh"];
export const LANG_KEY = "antler.console.lang";
/** The BCP 47 tag of each language: `<html lang>` and the locale dates and numbers are written in. */
export const LOCALES: Record<Lang, string> = { en: "en", zh: "zh-CN" };

const CATALOGS: Record<Lang, () => Promise<Catalog>> = {
  en: async () => en,
  zh: () => import("./messages/zh").then((m) => m.zh),
};

/** The reader's pick (kept in localStorage), else the first of the browser's languages the console has, else English. */
export function initialLang(): Lang {
  try {
    const stored = localStorage.getItem(LANG_KEY);
    if (stored === "en" || stored === "zh") return stored;
  } catch {
    // Storage blocked: the browser's languages decide.
  }
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = tag.toLowerCase().split("-")[0];
    if (base === "zh") return "zh";
    if (base === "en") return "en";
  }
  return "en";
}

export function loadCatalog(lang: Lang): Promise<Catalog> {
  return CATALOGS[lang]();
}

/** `{name}` placeholders filled from `values`. */
export function format(template: string, values?: Record<string, string | number>): string {
  if (!values) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

export type Translate = (key: MessageKey, values?: Record<string, string | number>) => string;

interface I18n {
  lang: Lang;
  /** For `toLocaleString` and friends. */
  locale: string;
  t: Translate;
  setLang(lang: Lang): void;
}

const I18nContext = createContext<I18n>({
  lang: "en",
  locale: LOCALES.en,
  t: (key, values) => format(en[key], values),
  setLang: () => undefined,
});

export function I18nProvider({ lang: firstLang, catalog: firstCatalog, children }: { lang: Lang; catalog: Catalog; children: ReactNode }) {
  const [current, setCurrent] = useState({ lang: firstLang, catalog: firstCatalog });
  const setLang = useCallback((lang: Lang) => {
    try {
      localStorage.setItem(LANG_KEY, lang);
    } catch {
      // Storage blocked: the choice holds for this page only.
    }
    void loadCatalog(lang).then((catalog) => {
      document.documentElement.lang = LOCALES[lang];
      setCurrent({ lang, catalog });
    });
  }, []);
  const value = useMemo<I18n>(
    () => ({
      lang: current.lang,
      locale: LOCALES[current.lang],
      t: (key, values) => format(current.catalog[key] ?? en[key], values),
      setLang,
    }),
    [current, setLang],
  );
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  return useContext(I18nContext);
}

/** The translate function of the current language. */
export function useT(): Translate {
  return useContext(I18nContext).t;
}
