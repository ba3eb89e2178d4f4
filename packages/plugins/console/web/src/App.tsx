import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from "react";
import { type ApiError, api, sessionInfo, signIn, signOut } from "./api";
import { Batches } from "./batches";
import { Chat, type Limits } from "./chat";
import { useDrawer } from "./drawer";
import { LANGS, type Lang, LOCALES, useI18n, useT } from "./i18n";
import { skipToContent } from "./keyboard";
import { Schedules } from "./schedules";
import { Status } from "./status";
import { type ThemeChoice, useTheme } from "./theme";
import { ThreadList, type ThreadRecord, useThreadPages } from "./thread-list";

type Route = { page: "threads"; threadId: string | null } | { page: "batches" } | { page: "schedules" } | { page: "status" };

function parseRoute(pathname: string): Route {
  const thread = /^\/threads\/([^/]+)/.exec(pathname);
  if (thread) return { page: "threads", threadId: decodeURIComponent(thread[1] ?? "") };
  if (pathname.startsWith("/batches")) return { page: "batches" };
  if (pathname.startsWith("/schedules")) return { page: "schedules" };
  if (pathname.startsWith("/status")) return { page: "status" };
  return { page: "threads", threadId: null };
}

function KeyForm({ onKey, problem }: { onKey(key: string): void; problem: string | null }): ReactNode {
  const t = useT();
  const [key, setKey] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (key.trim()) onKey(key.trim());
  };
  return (
    <main className="signin">
      <form className="card" onSubmit={submit}>
        <h1>{t("app.name")}</h1>
        <p>{t("signin.intro")}</p>
        <label htmlFor="api-key">{t("signin.key")}</label>
        <input id="api-key" type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} />
        {problem ? <p role="alert">{problem}</p> : null}
        <button type="submit" className="primary" disabled={!key.trim()}>
          {t("signin.submit")}
        </button>
      </form>
    </main>
  );
}

/** The theme switch in the top bar: follow the system, or pin light or dark (kept for the next visit). */
function ThemePicker(): ReactNode {
  const t = useT();
  const [theme, setTheme] = useTheme();
  return (
    <label className="theme-picker">
      <span className="sr-only">{t("theme.label")}</span>
      <select value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)}>
        <option value="system">{t("theme.system")}</option>
        <option value="light">{t("theme.light")}</option>
        <option value="dark">{t("theme.dark")}</option>
      </select>
    </label>
  );
}

/** The language switch in the top bar (kept for the next visit; the browser's language until then). */
function LanguagePicker(): ReactNode {
  const { t, lang, setLang } = useI18n();
  return (
    <label className="theme-picker">
      <span className="sr-only">{t("lang.label")}</span>
      <select value={lang} onChange={(e) => setLang(e.target.value as Lang)}>
        {LANGS.map((l) => (
          <option key={l} value={l} lang={LOCALES[l]}>
            {t(`lang.${l}` as const)}
          </option>
        ))}
      </select>
    </label>
  );
}

export function App(): ReactNode {
  const t = useT();
  const [route, setRoute] = useState<Route>(() => parseRoute(location.pathname));
  const [auth, setAuth] = useState<"checking" | "needed" | "ok">("checking");
  // Signed in by a session cookie (so Sign out has something to end), rather than by `auth.mode: none`.
  const [inSession, setInSession] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [limits, setLimits] = useState<Limits | null>(null);
  // The message to send in a branch once it opens (edit and resend, regenerate).
  const [pendingMessage, setPendingMessage] = useState<{ threadId: string; text: string } | null>(null);
  const clearPending = useCallback(() => setPendingMessage(null), []);
  // On a phone the thread list is a drawer over the chat (CSS shows it in place on wider screens).
  const [threadsOpen, setThreadsOpen] = useDrawer(".threads-open > .threads button.primary");

  const navigate = useCallback((path: string) => {
    history.pushState(null, "", path);
    setRoute(parseRoute(path));
  }, []);
  useEffect(() => {
    const onPop = () => setRoute(parseRoute(location.pathname));
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);

  const check = useCallback((afterSignIn = false) => {
    api<{ uploads: Limits; artifacts?: Limits["artifacts"]; suggestions?: Limits["suggestions"]; default_model?: string | null }>(
      "/console/status",
    )
      .then((s) => {
        setLimits({ ...s.uploads, artifacts: s.artifacts, suggestions: s.suggestions, defaultModel: s.default_model ?? null });
        setAuth("ok");
        sessionInfo()
          .then((info) => setInSession(info.via === "session"))
          .catch(() => undefined);
      })
      .catch((e: ApiError) => {
        if (e.status === 401) {
          // An expired or signed-out session says so; a first visit just shows the form.
          if (afterSignIn || e.message.includes("expired")) setProblem(e.message);
          setAuth("needed");
        } else {
          setProblem(e.message);
          setAuth("ok");
        }
      });
  }, []);
  useEffect(() => check(), [check]);

  const threadPages = useThreadPages(auth === "ok");
  const loadThreads = threadPages.refresh;

  if (auth === "checking") return <p className="loading">{t("loading")}</p>;
  if (auth === "needed")
    return (
      <KeyForm
        problem={problem}
        onKey={(key) => {
          setProblem(null);
          signIn(key)
            .then(() => check(true))
            .catch((e: ApiError) => setProblem(e.message));
        }}
      />
    );

  const newThread = async () => {
    const record = await api<ThreadRecord>("/threads", { method: "POST", json: {} });
    loadThreads();
    navigate(`/threads/${encodeURIComponent(record.thread_id)}`);
  };
  const deleteThread = async (id: string) => {
    if (!confirm(t("threads.confirmDelete"))) return;
    await api(`/threads/${encodeURIComponent(id)}`, { method: "DELETE" });
    threadPages.forget(id);
    loadThreads();
    if (route.page === "threads" && route.threadId === id) navigate("/threads");
  };
  const link = (path: string, label: string, active: boolean) => (
    <a
      href={path}
      aria-current={active ? "page" : undefined}
      onClick={(e) => {
        e.preventDefault();
        navigate(path);
      }}
    >
      {label}
    </a>
  );

  return (
    <div className="app">
      <header className="top">
        {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link by convention (announced as one); its target is picked when it is used */}
        <a
          className="skip-link"
          href="#main"
          onClick={(e) => {
            e.preventDefault();
            skipToContent();
          }}
        >
          {t("skip")}
        </a>
        <span className="brand">{t("app.name")}</span>
        <nav aria-label={t("nav.sections")}>
          {link("/threads", t("nav.threads"), route.page === "threads")}
          {link("/batches", t("nav.batches"), route.page === "batches")}
          {link("/schedules", t("nav.schedules"), route.page === "schedules")}
          {link("/status", t("nav.status"), route.page === "status")}
        </nav>
        <LanguagePicker />
        <ThemePicker />
        {inSession ? (
          <button
            type="button"
            className="link"
            onClick={() => {
              void signOut().then(() => {
                setInSession(false);
                setAuth("needed");
              });
            }}
          >
            {t("signout")}
          </button>
        ) : null}
      </header>
      {problem ? <p role="alert">{problem}</p> : null}
      {route.page === "threads" ? (
        <div className={`threads-page${route.threadId ? "" : " no-thread"}${threadsOpen ? " threads-open" : ""}`}>
          {threadsOpen ? (
            <button type="button" className="scrim" aria-label={t("threads.closeList")} onClick={() => setThreadsOpen(false)} />
          ) : null}
          <ThreadList
            pages={threadPages}
            current={route.threadId}
            onOpen={(id) => {
              setThreadsOpen(false);
              navigate(`/threads/${encodeURIComponent(id)}`);
            }}
            onNew={() => {
              setThreadsOpen(false);
              void newThread();
            }}
            onDelete={(id) => void deleteThread(id)}
          />
          <main className="main">
            {route.threadId ? (
              <Chat
                threadId={route.threadId}
                limits={limits}
                onChanged={loadThreads}
                onShowThreads={() => setThreadsOpen(true)}
                onOpenThread={(id) => navigate(`/threads/${encodeURIComponent(id)}`)}
                onBranched={(id, text) => {
                  setPendingMessage({ threadId: id, text });
                  loadThreads();
                  navigate(`/threads/${encodeURIComponent(id)}`);
                }}
                initialMessage={pendingMessage?.threadId === route.threadId ? pendingMessage.text : null}
                onInitialSent={clearPending}
              />
            ) : (
              <div className="empty">
                <h1>{t("threads.emptyTitle")}</h1>
                <p>{t("threads.emptyHint")}</p>
              </div>
            )}
          </main>
        </div>
      ) : null}
      {route.page === "batches" ? <Batches /> : null}
      {route.page === "schedules" ? <Schedules /> : null}
      {route.page === "status" ? <Status /> : null}
    </div>
  );
}
