import { Cron } from "croner";
import { SchedulerErrorCodes, schedulerError } from "./errors.js";

/**
 * Schedule math. Cron expressions are the classic five fields (minute hour day-of-month month day-of-week, with
 * names, ranges, lists and steps; `@daily`-style nicknames too) evaluated in an IANA timezone, so `0 9 * * *` in
 * Europe/Berlin is 09:00 Berlin time on both sides of a DST change. Across DST:
 * - a wall-clock time that does not exist (spring forward) fires once, shifted forward by the gap (02:30 → 03:30);
 * - a wall-clock time that happens twice (fall back) fires once, at its first occurrence.
 */

/** Throws a coded error unless `timezone` is an IANA zone this runtime knows (e.g. `Europe/Berlin`, `UTC`). */
export function assertTimezone(timezone: string, where = "timezone"): string {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return timezone;
  } catch {
    throw schedulerError(SchedulerErrorCodes.INVALID, `unknown timezone ${JSON.stringify(timezone)}`, {
      where,
      hint: "Use an IANA zone name such as UTC, Europe/Berlin or America/New_York.",
    });
  }
}

function cronFor(expression: string, timezone: string, where: string): Cron {
  const trimmed = expression.trim();
  if (!trimmed.startsWith("@") && trimmed.split(/\s+/).length !== 5) {
    throw schedulerError(
      SchedulerErrorCodes.INVALID,
      `cron expression ${JSON.stringify(expression)} has ${trimmed ? trimmed.split(/\s+/).length : 0} field(s); five are needed`,
      { where, hint: 'Write "minute hour day-of-month month day-of-week", e.g. "0 9 * * 1-5" for 09:00 on weekdays.' },
    );
  }
  try {
    return new Cron(trimmed, { timezone, mode: "5-part", paused: true });
  } catch (cause) {
    const reason = (cause as Error)?.message?.replace(/^CronPattern: /, "") ?? String(cause);
    throw schedulerError(SchedulerErrorCodes.INVALID, `invalid cron expression ${JSON.stringify(expression)}: ${reason}`, {
      where,
      hint: 'Fields are "minute(0-59) hour(0-23) day-of-month(1-31) month(1-12) day-of-week(0-6, Sunday=0)".',
      cause,
    });
  }
}

/** Validates a cron expression and its timezone; returns the next fire time after `after`, or throws. */
export function validateCron(expression: string, timezone: string, after: Date = new Date()): Date {
  assertTimezone(timezone);
  const next = nextCronFire(expression, timezone, after);
  if (!next) {
    throw schedulerError(SchedulerErrorCodes.INVALID, `cron expression ${JSON.stringify(expression)} never fires`, {
      where: "cron",
      hint: "Check day-of-month against the month (e.g. 31 in February).",
    });
  }
  return next;
}

/** The first fire time strictly after `after`, or null when the expression never matches again. */
export function nextCronFire(expression: string, timezone: string, after: Date): Date | null {
  return cronFor(expression, timezone, "cron").nextRun(after);
}

/** The next `count` fire times after `after` (for previews and tests). */
export function nextCronFires(expression: string, timezone: string, after: Date, count: number): Date[] {
  const out: Date[] = [];
  let from = after;
  for (let i = 0; i < count; i++) {
    const next = nextCronFire(expression, timezone, from);
    if (!next) break;
    out.push(next);
    from = next;
  }
  return out;
}

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?$/;

/**
 * Parses a `once` time. With `Z` or an offset it is an instant; without (`2026-12-01T09:00`) it is a wall-clock time
 * in `timezone`. Throws a coded error for anything else.
 */
export function parseRunAt(text: string, timezone: string, where = "at"): Date {
  const value = text.trim();
  if (ISO_WITH_ZONE.test(value)) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  const local = ISO_LOCAL.exec(value);
  if (local) {
    const [y, mo, d, h, mi, s, ms] = local.slice(1).map((part) => (part === undefined ? 0 : Number(part))) as number[];
    const date = zonedTimeToUtc(
      { year: y!, month: mo!, day: d!, hour: h!, minute: mi!, second: s!, millisecond: ms! },
      assertTimezone(timezone),
    );
    if (date) return date;
  }
  throw schedulerError(SchedulerErrorCodes.INVALID, `${JSON.stringify(text)} is not an ISO-8601 date and time`, {
    where,
    hint: "Write e.g. 2026-12-01T09:00:00Z, 2026-12-01T09:00:00+01:00, or 2026-12-01T09:00 (read in the task's timezone).",
  });
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

function offsetMinutes(instant: number, timezone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: timezone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(instant));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

/** The instant a wall-clock time in `timezone` names; a time inside a DST gap moves forward by the gap. */
export function zonedTimeToUtc(wall: WallTime, timezone: string): Date | null {
  const { year, month, day, hour, minute, second, millisecond } = wall;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const naive = Date.UTC(year, month - 1, day, hour, minute, second, millisecond);
  const check = new Date(naive);
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return null;
  // Candidates from the offsets on either side; a repeated hour matches twice (keep the first occurrence), a
  // time in a DST gap matches neither (keep the later candidate: the time moved forward by the gap).
  const first = naive - offsetMinutes(naive, timezone) * 60_000;
  const second2 = naive - offsetMinutes(first, timezone) * 60_000;
  const candidates = [first, second2].sort((a, b) => a - b);
  const matching = candidates.filter((c) => c + offsetMinutes(c, timezone) * 60_000 === naive);
  return new Date(matching[0] ?? (candidates[1] as number));
}
