import type { Frame, Page } from "playwright-core";
import { BrowserError, BrowserErrorCodes } from "./errors.js";

/**
 * A ref as the model writes it: a number (`12`) for an element of the page's main frame, or `f<frame>e<element>`
 * (`f2e12`) for an element inside frame f2. A string holding a plain number (`"12"`, `"[12]"`) is accepted too.
 */
export type ElementRef = number | string;

export interface ParsedRef {
  /** The frame id (`2` of `f2e12`), or undefined for the main frame. */
  readonly frameId: number | undefined;
  /** The number stamped on the element (`12`). */
  readonly element: number;
  /** The ref as the snapshot shows it, for messages: `[12]`, `[f2e12]`. */
  readonly label: string;
}

/** The pattern tool schemas accept for a string ref. */
export const ELEMENT_REF_PATTERN = /^\s*\[?\s*(?:f(\d+)e)?(\d+)\s*\]?\s*$/i;

export function parseElementRef(ref: ElementRef): ParsedRef {
  if (typeof ref === "number") {
    if (Number.isSafeInteger(ref) && ref >= 1) return { frameId: undefined, element: ref, label: `[${ref}]` };
  } else {
    const match = ELEMENT_REF_PATTERN.exec(ref);
    if (match?.[2]) {
      const element = Number(match[2]);
      const frameId = match[1] === undefined ? undefined : Number(match[1]);
      if (element >= 1 && Number.isSafeInteger(element)) {
        return { frameId, element, label: frameId === undefined ? `[${element}]` : `[f${frameId}e${element}]` };
      }
    }
  }
  throw new BrowserError(
    BrowserErrorCodes.STALE_REF,
    `${JSON.stringify(ref)} is not a ref. Refs are the labels in [brackets] in the snapshot: a number such as 12 for the page itself, ` +
      "or f2e12 for an element inside frame f2. Take a new snapshot with browser_snapshot if you have none.",
  );
}

/** `https://x/a#b` and `https://x/a` are one document: a fragment change does not replace the frame's document. */
function withoutFragment(url: string): string {
  const hash = url.indexOf("#");
  return hash < 0 ? url : url.slice(0, hash);
}

interface FrameEntry {
  readonly id: number;
  readonly frame: Frame;
  /** The frame's URL when it got this id. */
  readonly url: string;
  /** Why refs of this id no longer resolve: set when the frame navigated to another document or was removed. */
  gone?: string;
}

/** Frame ids kept for stale-ref messages after their frame went away; older ones are forgotten. */
const MAX_FRAME_ENTRIES = 500;

/**
 * Gives child frames the short ids their refs carry (`f2` of `f2e12`) and resolves them back. An id stands for
 * one document in one frame: when the frame navigates to another URL or is removed, the id is retired, so a
 * ref from the old document is refused instead of reaching into whatever the frame shows now. Ids are never
 * reused within a session.
 */
export class FrameRefs {
  private nextId = 1;
  private readonly current = new WeakMap<Frame, FrameEntry>();
  private readonly byId = new Map<number, FrameEntry>();
  private readonly watched = new WeakSet<Page>();

  /** Retires the ids of `page`'s frames as they navigate away or detach. */
  watch(page: Page): void {
    if (this.watched.has(page)) return;
    this.watched.add(page);
    page.on("framenavigated", (frame) => {
      const entry = this.current.get(frame);
      if (entry && withoutFragment(frame.url()) !== withoutFragment(entry.url)) this.retire(entry, `navigated to ${frame.url()}`);
    });
    page.on("framedetached", (frame) => {
      const entry = this.current.get(frame);
      if (entry) this.retire(entry, "was removed from the page");
    });
  }

  /** The id of a child frame's current document, assigned on first sight (the snapshot calls this). */
  idOf(frame: Frame): number {
    const url = frame.url();
    const known = this.current.get(frame);
    if (known && !known.gone) {
      // The navigation event may still be on its way: the URL decides.
      if (withoutFragment(url) === withoutFragment(known.url)) return known.id;
      this.retire(known, `navigated to ${url}`);
    }
    const entry: FrameEntry = { id: this.nextId++, frame, url };
    this.current.set(frame, entry);
    this.byId.set(entry.id, entry);
    if (this.byId.size > MAX_FRAME_ENTRIES) {
      for (const [id, old] of this.byId) {
        if (this.byId.size <= MAX_FRAME_ENTRIES) break;
        if (old.gone) this.byId.delete(id);
      }
    }
    return entry.id;
  }

  /** The frame a ref points into, or a STALE_REF error that says what happened to it. */
  resolve(ref: ParsedRef, page: Page): Frame {
    if (ref.frameId === undefined) return page.mainFrame();
    const entry = this.byId.get(ref.frameId);
    const again = "Take a new snapshot with browser_snapshot and use a ref from it.";
    if (!entry) {
      throw new BrowserError(
        BrowserErrorCodes.STALE_REF,
        `Ref ${ref.label} names frame f${ref.frameId}, which no snapshot of this session showed. ${again}`,
      );
    }
    if (!entry.gone && entry.frame.isDetached()) this.retire(entry, "was removed from the page");
    if (!entry.gone && withoutFragment(entry.frame.url()) !== withoutFragment(entry.url))
      this.retire(entry, `navigated to ${entry.frame.url()}`);
    if (entry.gone) {
      throw new BrowserError(
        BrowserErrorCodes.STALE_REF,
        `Ref ${ref.label} is stale: its frame f${entry.id} (${entry.url}) ${entry.gone} since the snapshot it came from. ${again}`,
      );
    }
    if (entry.frame.page() !== page) {
      throw new BrowserError(
        BrowserErrorCodes.STALE_REF,
        `Ref ${ref.label} belongs to frame f${entry.id} of another tab than the current page (a popup became the current page). ${again}`,
      );
    }
    return entry.frame;
  }

  private retire(entry: FrameEntry, reason: string): void {
    entry.gone ??= reason;
    if (this.current.get(entry.frame) === entry) this.current.delete(entry.frame);
  }
}
