// The thread list: the user's threads, newest first, in date groups, read a page at a time from
// `GET /api/threads?limit&offset` as the reader reaches the end of the list (or presses Load more).
import { type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import { groupThreadsByDate, type ThreadGroup } from "../../src/thread-groups";
import { api } from "./api";
import { type Translate, useI18n } from "./i18n";

export interface ThreadRecord {
  thread_id: string;
  title: string | null;
  updated_at: string;
}

/** Threads per read of the list. */
export const THREADS_PAGE = 50;

const listPath = (offset: number) => `/threads?limit=${THREADS_PAGE}&offset=${offset}`;

export interface ThreadPages {
  threads: ThreadRecord[];
  /** The API may have older threads than those loaded. */
  hasMore: boolean;
  /** Reads the first page again (after a new thread, a run, a rename) and puts it in front of the older ones. */
  refresh(): void;
  /** Reads the page after the loaded threads. */
  loadMore(): void;
  /** Drops a thread from the loaded list (it was deleted). */
  forget(threadId: string): void;
}

/**
 * The loaded threads. A refresh reads only the first page: a thread that changed moved to the top, so it is in
 * that page, and the older pages keep what they had (less any thread the first page now holds or passed).
 */
export function useThreadPages(enabled: boolean): ThreadPages {
  const [threads, setThreads] = useState<ThreadRecord[]>([]);
  const [hasMore, setHasMore] = useState(false);
  const loading = useRef(false);
  const loaded = useRef(threads);
  loaded.current = threads;

  const refresh = useCallback(() => {
    api<{ threads: ThreadRecord[] }>(listPath(0))
      .then(({ threads: first }) => {
        setThreads((old) => {
          if (old.length <= first.length || first.length < THREADS_PAGE) return first;
          const ids = new Set(first.map((t) => t.thread_id));
          const oldest = first.at(-1)?.updated_at ?? "";
          // Older loaded threads the first page did not reach; one updated since would be in the first page.
          return [...first, ...old.filter((t) => !ids.has(t.thread_id) && t.updated_at <= oldest)];
        });
        setHasMore((more) => (first.length < THREADS_PAGE ? false : more || loaded.current.length <= first.length));
      })
      .catch(() => undefined);
  }, []);

  const loadMore = useCallback(() => {
    if (loading.current) return;
    loading.current = true;
    api<{ threads: ThreadRecord[] }>(listPath(loaded.current.length))
      .then(({ threads: next }) => {
        setThreads((old) => {
          const ids = new Set(old.map((t) => t.thread_id));
          return [...old, ...next.filter((t) => !ids.has(t.thread_id))];
        });
        setHasMore(next.length === THREADS_PAGE);
      })
      .catch(() => undefined)
      .finally(() => {
        loading.current = false;
      });
  }, []);

  const forget = useCallback((threadId: string) => setThreads((old) => old.filter((t) => t.thread_id !== threadId)), []);

  useEffect(() => {
    if (enabled) refresh();
  }, [enabled, refresh]);

  return { threads, hasMore, refresh, loadMore, forget };
}

function groupLabel(group: ThreadGroup<ThreadRecord>, t: Translate, locale: string): string {
  if (group.kind === "month") return (group.month ?? new Date()).toLocaleDateString(locale, { month: "long", year: "numeric" });
  return t(`threads.group.${group.kind}`);
}

/** Calls `onSeen` when `target` scrolls into its scrolling ancestor's view (the end of the list). */
function useSeen(onSeen: (() => void) | null): (target: HTMLElement | null) => void {
  const observer = useRef<IntersectionObserver | null>(null);
  return useCallback(
    (target: HTMLElement | null) => {
      observer.current?.disconnect();
      observer.current = null;
      if (!target || !onSeen) return;
      observer.current = new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting)) onSeen();
      });
      observer.current.observe(target);
    },
    [onSeen],
  );
}

export function ThreadList({
  pages,
  current,
  onOpen,
  onNew,
  onDelete,
}: {
  pages: ThreadPages;
  current: string | null;
  onOpen(id: string): void;
  onNew(): void;
  onDelete(id: string): void;
}): ReactNode {
  const { t, locale } = useI18n();
  const [query, setQuery] = useState("");
  const untitled = t("threads.untitled");
  // Matches what the list shows (the title, or "Untitled thread") and the thread id, among the loaded threads.
  const needle = query.trim().toLowerCase();
  const shown = pages.threads.filter((th) => `${th.title ?? untitled} ${th.thread_id}`.toLowerCase().includes(needle));
  const groups = groupThreadsByDate(shown, new Date());
  const endRef = useSeen(pages.hasMore ? pages.loadMore : null);
  return (
    <nav className="threads" aria-label={t("nav.threads")}>
      <button type="button" className="primary" onClick={onNew}>
        {t("threads.new")}
      </button>
      <label className="search">
        <span className="sr-only">{t("threads.search")}</span>
        <input type="search" placeholder={t("threads.search")} value={query} onChange={(e) => setQuery(e.target.value)} />
      </label>
      {groups.map((group) => (
        <section key={group.key} className="thread-group" aria-labelledby={`thread-group-${group.key}`}>
          <h2 id={`thread-group-${group.key}`}>{groupLabel(group, t, locale)}</h2>
          <ul>
            {group.threads.map((th) => (
              <li key={th.thread_id} className={th.thread_id === current ? "current" : undefined}>
                <a
                  href={`/threads/${encodeURIComponent(th.thread_id)}`}
                  aria-current={th.thread_id === current ? "page" : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    onOpen(th.thread_id);
                  }}
                >
                  <span className="thread-title">{th.title ?? untitled}</span>
                  <span className="thread-time">
                    {group.kind === "today" || group.kind === "yesterday"
                      ? new Date(th.updated_at).toLocaleTimeString(locale, { hour: "numeric", minute: "2-digit" })
                      : new Date(th.updated_at).toLocaleDateString(locale)}
                  </span>
                </a>
                <button
                  type="button"
                  className="icon"
                  aria-label={t("threads.delete", { name: th.title ?? th.thread_id })}
                  onClick={() => onDelete(th.thread_id)}
                >
                  ✕
                </button>
              </li>
            ))}
          </ul>
        </section>
      ))}
      {shown.length === 0 ? <p className="muted">{t(query ? "threads.noneMatch" : "threads.none")}</p> : null}
      {pages.hasMore ? (
        <button ref={endRef} type="button" className="load-more" onClick={pages.loadMore}>
          {t("threads.loadMore")}
        </button>
      ) : null}
    </nav>
  );
}
