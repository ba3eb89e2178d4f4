import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { I18nProvider, initialLang, LOCALES, loadCatalog } from "./i18n";
import "./styles.css";

const root = document.getElementById("root");
if (root) {
  const lang = initialLang();
  document.documentElement.lang = LOCALES[lang];
  // A language other than English waits for its catalog (one small chunk), so the first screen is already in it.
  const catalog = await loadCatalog(lang);
  createRoot(root).render(
    <StrictMode>
      <I18nProvider lang={lang} catalog={catalog}>
        <App />
      </I18nProvider>
    </StrictMode>,
  );
}
