// The thread list: the user's threads, newest first, in date groups, read a page at a time from
// `GET /api/threads?limit&offset` as the reader reaches the end of the list (or presses Load more).
import { type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import { groupThreadsByDate, type ThreadGroup } from "../../src/thread-groups";
import { api } from "./api";

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

function groupLabel(group: ThreadGroup<ThreadRecord>): string {
  switch (group.kind) {
    case "today":
      return "Today";
    case "yesterday":
      return "Yesterday";
    case "week":
      return "Previous 7 days";
    case "month30":
      return "Previous 30 days";
    case "month":
      return (group.month ?? new Date()).toLocaleDateString(undefined, { month: "long", year: "numeric" });
  }
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
  const [query, setQuery] = useState("");
  // Matches what the list shows (the title, or "Untitled thread") and the thread id, among the loaded threads.
  const needle = query.trim().toLowerCase();
  const shown = pages.threads.filter((t) => `${t.title ?? "Untitled thread"} ${t.thread_id}`.toLowerCase().includes(needle));
  const groups = groupThreadsByDate(shown, new Date());
  const endRef = useSeen(pages.hasMore ? pages.loadMore : null);
  return (
    <nav className="threads" aria-label="Threads">
      <button type="button" className="primary" onClick={onNew}>
        New thread
      </button>
      <label className="search">
        <span className="sr-only">Search threads</span>
        <input type="search" placeholder="Search threads" value={query} onChange={(e) => setQuery(e.target.value)} />
      </label>
      {groups.map((group) => (
        <section key={group.key} className="thread-group" aria-labelledby={`thread-group-${group.key}`}>
          <h2 id={`thread-group-${group.key}`}>{groupLabel(group)}</h2>
          <ul>
            {group.threads.map((t) => (
              <li key={t.thread_id} className={t.thread_id === current ? "current" : undefined}>
                <a
                  href={`/threads/${encodeURIComponent(t.thread_id)}`}
                  aria-current={t.thread_id === current ? "page" : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    onOpen(t.thread_id);
                  }}
                >
                  <span className="thread-title">{t.title ?? "Untitled thread"}</span>
                  <span className="thread-time">
                    {group.kind === "today" || group.kind === "yesterday"
                      ? new Date(t.updated_at).toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit" })
                      : new Date(t.updated_at).toLocaleDateString()}
                  </span>
                </a>
                <button
                  type="button"
                  className="icon"
                  aria-label={`Delete thread ${t.title ?? t.thread_id}`}
                  onClick={() => onDelete(t.thread_id)}
                >
                  ✕
                </button>
              </li>
            ))}
          </ul>
        </section>
      ))}
      {shown.length === 0 ? <p className="muted">No threads{query ? " match" : " yet"}.</p> : null}
      {pages.hasMore ? (
        <button ref={endRef} type="button" className="load-more" onClick={pages.loadMore}>
          Load more threads
        </button>
      ) : null}
    </nav>
  );
}
