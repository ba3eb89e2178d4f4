import { describe, expect, it } from "vitest";
import {
  assertTimezone,
  isSchedulerError,
  nextCronFires,
  parseRunAt,
  SchedulerErrorCodes,
  validateCron,
  zonedTimeToUtc,
} from "../src/index.js";

const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

describe("cron next-fire computation", () => {
  it("keeps 09:00 local time in Europe/Berlin across the spring DST change (UTC hour moves from 08 to 07)", () => {
    expect(iso(nextCronFires("0 9 * * *", "Europe/Berlin", new Date("2026-03-27T12:00:00Z"), 3))).toEqual([
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z",
      "2026-03-30T07:00:00.000Z",
    ]);
  });

  it("keeps 09:00 local time in Europe/Berlin across the autumn DST change (UTC hour moves from 07 to 08)", () => {
    expect(iso(nextCronFires("0 9 * * *", "Europe/Berlin", new Date("2026-10-24T12:00:00Z"), 2))).toEqual([
      "2026-10-25T08:00:00.000Z",
      "2026-10-26T08:00:00.000Z",
    ]);
  });

  it("fires a time inside the spring-forward gap once, shifted forward by the gap (02:30 → 03:30 EDT)", () => {
    expect(iso(nextCronFires("30 2 * * *", "America/New_York", new Date("2026-03-07T12:00:00Z"), 3))).toEqual([
      "2026-03-08T07:30:00.000Z",
      "2026-03-09T06:30:00.000Z",
      "2026-03-10T06:30:00.000Z",
    ]);
  });

  it("fires a wall-clock time that happens twice at fall-back only once, at its first occurrence", () => {
    const fires = iso(nextCronFires("30 1 * * *", "America/New_York", new Date("2026-10-31T12:00:00Z"), 2));
    expect(fires).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
  });

  it("evaluates weekday lists and ranges in the task's timezone, not in UTC", () => {
    // 23:30 on Friday in Los Angeles is already Saturday in UTC.
    const [first] = nextCronFires("30 23 * * 5", "America/Los_Angeles", new Date("2026-12-01T00:00:00Z"), 1);
    expect(first?.toISOString()).toBe("2026-12-05T07:30:00.000Z");
  });

  it("rejects an expression with the wrong number of fields, naming how many it found", () => {
    const error = (() => {
      try {
        validateCron("* * * *", "UTC");
      } catch (e) {
        return e;
      }
    })();
    expect(isSchedulerError(error, SchedulerErrorCodes.INVALID)).toBe(true);
    expect((error as Error).message).toMatch(/has 4 field\(s\); five are needed/);
    expect(() => validateCron("0 0 * * * *", "UTC")).toThrow(/has 6 field\(s\)/);
  });

  it("rejects out-of-range values with the field that is wrong", () => {
    expect(() => validateCron("61 * * * *", "UTC")).toThrow(/invalid cron expression "61 \* \* \* \*".*minute/);
    expect(() => validateCron("0 25 * * *", "UTC")).toThrow(/hour/);
  });

  it("rejects an expression that can never fire", () => {
    expect(() => validateCron("0 0 31 2 *", "UTC")).toThrow(/never fires/);
  });

  it("rejects an unknown timezone with a coded error and an example of a valid one", () => {
    expect(() => validateCron("0 9 * * *", "Mars/Olympus")).toThrow(/unknown timezone "Mars\/Olympus"[\s\S]*Europe\/Berlin/);
    expect(assertTimezone("Asia/Tokyo")).toBe("Asia/Tokyo");
  });
});

describe("once times", () => {
  it("reads a time with Z or an offset as an instant", () => {
    expect(parseRunAt("2026-12-01T09:00:00+01:00", "America/New_York").toISOString()).toBe("2026-12-01T08:00:00.000Z");
    expect(parseRunAt("2026-12-01T09:00:00Z", "Asia/Tokyo").toISOString()).toBe("2026-12-01T09:00:00.000Z");
  });

  it("reads a time without an offset as wall-clock time in the task's timezone", () => {
    expect(parseRunAt("2026-12-01T09:00", "Europe/Berlin").toISOString()).toBe("2026-12-01T08:00:00.000Z");
    expect(parseRunAt("2026-07-01 09:00:00", "Europe/Berlin").toISOString()).toBe("2026-07-01T07:00:00.000Z");
  });

  it("resolves wall-clock times in DST gaps forward and repeated times to the first occurrence", () => {
    const wall = { year: 2026, month: 3, day: 8, hour: 2, minute: 30, second: 0, millisecond: 0 };
    expect(zonedTimeToUtc(wall, "America/New_York")?.toISOString()).toBe("2026-03-08T07:30:00.000Z");
    const repeated = { year: 2026, month: 11, day: 1, hour: 1, minute: 30, second: 0, millisecond: 0 };
    expect(zonedTimeToUtc(repeated, "America/New_York")?.toISOString()).toBe("2026-11-01T05:30:00.000Z");
  });

  it("rejects text that is not an ISO date-time, and impossible dates", () => {
    expect(() => parseRunAt("tomorrow at nine", "UTC")).toThrow(/"tomorrow at nine" is not an ISO-8601 date and time/);
    expect(() => parseRunAt("2026-02-30T09:00", "UTC")).toThrow(/not an ISO-8601/);
  });
});
