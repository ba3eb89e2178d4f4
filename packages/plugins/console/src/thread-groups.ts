// The thread list's date groups: Today, Yesterday, Previous 7 days, Previous 30 days, then one group per calendar
// month. Days are the reader's calendar days (local time), so "Yesterday" means the date before today's, not
// 24 hours ago.

export type ThreadGroupKind = "today" | "yesterday" | "week" | "month30" | "month";

export interface ThreadGroup<T> {
  /** `month` groups are keyed by their year and month (`2026-03`); the others by their kind. */
  key: string;
  kind: ThreadGroupKind;
  /** The first day of the group's month (for `month` groups, to name it in the reader's language). */
  month: Date | null;
  threads: T[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Whole calendar days from `then` to `now` in local time (0: the same date; negative: a later date). */
function calendarDaysBetween(then: Date, now: Date): number {
  const a = Date.UTC(then.getFullYear(), then.getMonth(), then.getDate());
  const b = Date.UTC(now.getFullYear(), now.getMonth(), now.getDate());
  return Math.round((b - a) / DAY_MS);
}

/**
 * Splits threads (newest first, as the API lists them) into date groups, keeping their order. A date in the
 * future (another machine's clock) counts as today.
 */
export function groupThreadsByDate<T extends { updated_at: string }>(threads: readonly T[], now: Date): ThreadGroup<T>[] {
  const groups: ThreadGroup<T>[] = [];
  for (const thread of threads) {
    const when = new Date(thread.updated_at);
    const days = calendarDaysBetween(when, now);
    let kind: ThreadGroupKind;
    if (days <= 0) kind = "today";
    else if (days === 1) kind = "yesterday";
    else if (days <= 7) kind = "week";
    else if (days <= 30) kind = "month30";
    else kind = "month";
    const key = kind === "month" ? `${when.getFullYear()}-${String(when.getMonth() + 1).padStart(2, "0")}` : kind;
    let group = groups.at(-1);
    if (group?.key !== key) {
      group = { key, kind, month: kind === "month" ? new Date(when.getFullYear(), when.getMonth(), 1) : null, threads: [] };
      groups.push(group);
    }
    group.threads.push(thread);
  }
  return groups;
}
