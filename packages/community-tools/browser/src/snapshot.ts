/** The attribute that carries an element's ref on the page (the element number; a frame's refs add a prefix). */
export const REF_ATTRIBUTE = "data-antler-ref";
/** The attribute a snapshot puts on each visible `<iframe>`/`<frame>`, to find the frame that belongs there. */
export const FRAME_SLOT_ATTRIBUTE = "data-antler-frame-slot";

/** The assembled snapshot of a page: its main frame with the content of its frames spliced in. */
export interface PageSnapshot {
  readonly title: string;
  readonly url: string;
  readonly lines: readonly string[];
  readonly truncated: boolean;
  /** The next ref number to hand out (refs are never reused within a session). */
  readonly nextRef: number;
  readonly refCount: number;
  /** Set when the listing stopped at this many interactive elements (the per-snapshot cap), not at the size cap. */
  readonly elementLimit?: number;
}

/** Where a visible iframe sits in one frame's snapshot: before `lines[at]`. */
export interface FrameSlot {
  readonly slot: string;
  readonly at: number;
  /** The iframe's `src`, for a frame that has no content to show. */
  readonly src: string;
}

/** The snapshot of one frame's document, as the page-side walker returns it. */
export interface FrameSnapshot extends PageSnapshot {
  readonly frames: readonly FrameSlot[];
  /** The walk stopped because `maxRefs` elements were listed. */
  readonly refCapped: boolean;
}

export interface SnapshotArgs {
  readonly startRef: number;
  readonly maxChars: number;
  /** Stop listing interactive elements after this many (the page-wide element cap). Default: no cap. */
  readonly maxRefs?: number;
  /** Written before each element number in the listing: `""` in the main frame, `f2e` in frame f2. */
  readonly refPrefix?: string;
  /**
   * Written before each frame slot number: a value unique to this snapshot, so that a slot an earlier snapshot
   * left on an iframe that is hidden now cannot be taken for one of this snapshot's.
   */
  readonly slotPrefix?: string;
}

/**
 * Runs in the page (as source text: this package compiles without DOM types). Walks the DOM in reading order,
 * stamps every visible interactive element with a numeric ref, keeps existing stamps so refs stay stable, and
 * renders a compact outline bounded by `maxChars`.
 */
const SNAPSHOT_SOURCE = String.raw`(args) => {
  const ATTR = "${REF_ATTRIBUTE}";
  const SLOT = "${FRAME_SLOT_ATTRIBUTE}";
  const PREFIX = args.refPrefix || "";
  const MAX_REFS = typeof args.maxRefs === "number" ? args.maxRefs : Infinity;
  let next = args.startRef;
  const lines = [];
  const frames = [];
  let used = 0;
  let truncated = false;
  let refCapped = false;
  let refCount = 0;
  const seen = new Set();
  let buffer = "";
  const norm = (s) => String(s == null ? "" : s).replace(/\s+/g, " ").trim();
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
  const q = (s) => JSON.stringify(s);
  const emit = (line) => {
    if (truncated) return;
    if (used + line.length + 1 > args.maxChars) { truncated = true; return; }
    lines.push(line);
    used += line.length + 1;
  };
  const flush = () => { if (buffer) { emit(clip(buffer, 600)); buffer = ""; } };
  let quiet = 0;
  const text = (t) => { if (quiet > 0) return; buffer = buffer ? buffer + " " + t : t; if (buffer.length > 600) flush(); };
  const SKIP = new Set(["script", "style", "noscript", "template", "head", "meta", "link", "svg", "canvas", "object", "embed"]);
  const BLOCK = new Set(["p", "div", "section", "article", "header", "footer", "nav", "main", "aside", "ul", "ol", "li", "table", "tr", "form", "fieldset", "br", "hr", "pre", "blockquote", "dl", "dt", "dd", "figure", "figcaption", "details", "legend", "h1", "h2", "h3", "h4", "h5", "h6"]);
  const ROLES = new Set(["button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option", "switch", "combobox", "textbox", "searchbox", "slider", "spinbutton", "treeitem", "listbox"]);
  const INTERACTIVE_SELECTOR = "a[href],button,input:not([type=hidden]),select,textarea,summary,[contenteditable],[role],[onclick]";
  const visible = (el) => (typeof el.checkVisibility === "function" ? el.checkVisibility({ checkVisibilityCSS: true }) : true);
  const isInteractive = (el) => {
    const tag = el.localName;
    if (tag === "a") return el.hasAttribute("href");
    if (tag === "button" || tag === "select" || tag === "textarea" || tag === "summary") return true;
    if (tag === "input") return (el.getAttribute("type") || "").toLowerCase() !== "hidden";
    const role = el.getAttribute("role");
    if (role && ROLES.has(role)) return true;
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return true;
    if (el.hasAttribute("onclick")) return !el.querySelector(INTERACTIVE_SELECTOR);
    return false;
  };
  const roleOf = (el) => {
    const role = el.getAttribute("role");
    if (role) return role;
    const tag = el.localName;
    if (tag === "a") return "link";
    if (tag === "button" || tag === "summary") return "button";
    if (tag === "select") return el.multiple ? "listbox" : "combobox";
    if (tag === "textarea") return "textbox";
    if (tag === "input") {
      const type = (el.type || "text").toLowerCase();
      if (type === "checkbox" || type === "radio") return type;
      if (type === "submit" || type === "button" || type === "reset" || type === "image") return "button";
      if (type === "range") return "slider";
      if (type === "number") return "spinbutton";
      if (type === "search") return "searchbox";
      if (type === "file") return "file-input";
      return "textbox";
    }
    if (el.isContentEditable) return "textbox";
    return "clickable";
  };
  const nameOf = (el) => {
    const aria = norm(el.getAttribute("aria-label"));
    if (aria) return aria;
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const t = norm(by.split(/\s+/).map((id) => { const n = document.getElementById(id); return n ? n.textContent : ""; }).join(" "));
      if (t) return t;
    }
    const tag = el.localName;
    if (tag === "input") {
      const type = (el.type || "text").toLowerCase();
      if (type === "submit" || type === "button" || type === "reset") return norm(el.value) || type;
      if (type === "image") return norm(el.alt) || "image";
    }
    if (el.labels && el.labels.length) {
      const t = norm(Array.from(el.labels).map((l) => l.innerText || l.textContent).join(" "));
      if (t) return t;
    }
    if (tag !== "input" && tag !== "select" && tag !== "textarea") {
      const t = norm(el.innerText || el.textContent);
      if (t) return t;
      const img = el.querySelector("img[alt]");
      if (img && norm(img.alt)) return norm(img.alt);
    }
    return norm(el.getAttribute("title")) || norm(el.getAttribute("placeholder")) || norm(el.getAttribute("name"));
  };
  const describe = (el, ref) => {
    const role = roleOf(el);
    const parts = ["[" + PREFIX + ref + "] " + role];
    const name = clip(nameOf(el), 120);
    if (name) parts.push(q(name));
    const tag = el.localName;
    if (tag === "a") parts.push("-> " + clip(el.href, 160));
    if (tag === "input" || tag === "textarea") {
      const type = (el.type || "text").toLowerCase();
      if (type === "checkbox" || type === "radio") parts.push("checked=" + el.checked);
      else if (type === "password") parts.push("type=password", el.value ? "value=<" + el.value.length + " characters, hidden>" : "value=\"\"");
      else if (role !== "button" && type !== "file") {
        if (type !== "text" && tag === "input") parts.push("type=" + type);
        if (el.value) parts.push("value=" + q(clip(el.value, 100)));
        const ph = norm(el.getAttribute("placeholder"));
        if (ph && ph !== name) parts.push("placeholder=" + q(clip(ph, 60)));
      }
      if (el.required) parts.push("required");
    }
    if (tag === "select") {
      const selected = Array.from(el.selectedOptions || []).map((o) => norm(o.textContent));
      parts.push("value=" + q(selected.join(", ")));
      const options = Array.from(el.options || []).map((o) => q(clip(norm(o.textContent), 40)));
      parts.push("options: " + options.slice(0, 15).join(", ") + (options.length > 15 ? ", … (" + options.length + " in all)" : ""));
    }
    if (role === "checkbox" || role === "switch" || role === "radio") {
      const checked = el.getAttribute("aria-checked");
      if (checked && tag !== "input") parts.push("checked=" + checked);
    }
    if (el.isContentEditable && tag !== "input" && tag !== "textarea") parts.push("editable");
    if (el.disabled || el.getAttribute("aria-disabled") === "true") parts.push("disabled");
    return parts.join(" ");
  };
  const stamp = (el) => {
    let ref = el.getAttribute(ATTR);
    // A stamp this pass already used belongs to another element (the page copied it): give this one a new ref.
    if (!ref || !/^[0-9]+$/.test(ref) || seen.has(ref)) {
      ref = String(next++);
      el.setAttribute(ATTR, ref);
    }
    seen.add(ref);
    refCount++;
    return ref;
  };
  const walk = (node) => {
    if (truncated) return;
    if (node.nodeType === 3) {
      const t = norm(node.data);
      if (t) text(t);
      return;
    }
    if (node.nodeType !== 1 && node.nodeType !== 11) return;
    if (node.nodeType === 1) {
      const el = node;
      const tag = el.localName;
      if (SKIP.has(tag)) return;
      if (el.getAttribute("aria-hidden") === "true") return;
      if (!visible(el)) return;
      if (isInteractive(el)) {
        flush();
        if (refCount >= MAX_REFS) { truncated = true; refCapped = true; return; }
        emit(describe(el, stamp(el)));
        if (tag === "a" || tag === "button" || tag === "select" || tag === "textarea" || tag === "input" || !el.querySelector(INTERACTIVE_SELECTOR)) return;
      }
      if (tag === "img") {
        const alt = norm(el.getAttribute("alt"));
        if (alt) text("[image: " + clip(alt, 100) + "]");
        return;
      }
      if (tag === "iframe" || tag === "frame") {
        // The frame's own content is read in that frame and spliced in here by the caller. A frame without
        // area (a tracking pixel, a messaging channel) shows the reader nothing.
        flush();
        const box = el.getBoundingClientRect();
        if (truncated || box.width < 1 || box.height < 1) return;
        const slot = (args.slotPrefix || "") + frames.length;
        el.setAttribute(SLOT, slot);
        frames.push({ slot, at: lines.length, src: clip(el.src || "", 160) });
        return;
      }
      const block = BLOCK.has(tag);
      if (block) flush();
      const heading = /^h([1-6])$/.exec(tag);
      if (heading && !el.querySelector(INTERACTIVE_SELECTOR)) {
        emit("#".repeat(Number(heading[1])) + " " + clip(norm(el.innerText || el.textContent), 200));
        return;
      }
      if (tag === "li") buffer = "-";
      if (heading) buffer = "#".repeat(Number(heading[1]));
      if (tag === "td" || tag === "th") text("|");
      // A label's text is already the name of its control: keep only the controls inside it.
      const labelled = tag === "label" && el.control && visible(el.control);
      if (labelled) quiet++;
      for (const child of el.childNodes) walk(child);
      if (el.shadowRoot) for (const child of el.shadowRoot.childNodes) walk(child);
      if (labelled) quiet--;
      if (tag === "tr") text("|");
      if (block) flush();
      return;
    }
    for (const child of node.childNodes) walk(child);
  };
  if (document.body) walk(document.body);
  flush();
  return { title: document.title, url: location.href, lines, truncated, nextRef: next, refCount, frames, refCapped };
}`;

/** The page-side expression for `frame.evaluate`: reads one frame's document (not the frames inside it). */
export function snapshotExpression(args: SnapshotArgs): string {
  return `(${SNAPSHOT_SOURCE})(${JSON.stringify(args)})`;
}

/** Renders a snapshot for the model. */
export function formatSnapshot(
  snapshot: PageSnapshot,
  extra: { blocked?: readonly { url: string; reason: string; kind: string }[]; blockedOmitted?: number; note?: string } = {},
): string {
  const out = [`Page: ${snapshot.title || "(no title)"}`, `URL: ${snapshot.url}`];
  if (extra.note) out.push(extra.note);
  if (snapshot.lines.length === 0) out.push("(the page shows no text and no interactive elements)");
  out.push(...snapshot.lines);
  if (snapshot.truncated && snapshot.elementLimit !== undefined) {
    out.push(
      `[snapshot cut after ${snapshot.elementLimit} interactive elements (the limit per snapshot, all frames together). ` +
        "Use browser_get_text to read the whole page text, or act on the refs shown.]",
    );
  } else if (snapshot.truncated) {
    out.push(
      `[snapshot cut at ${snapshot.lines.join("\n").length} characters (snapshot_max_chars); ${snapshot.refCount} interactive elements are listed above. ` +
        "Use browser_get_text to read the whole page text, or act on the refs shown.]",
    );
  }
  const blocked = extra.blocked ?? [];
  if (blocked.length > 0) {
    out.push("Blocked by the SSRF guard since the last snapshot (these resources did not load):");
    for (const b of blocked) out.push(`- ${b.kind} ${b.url}: ${b.reason}`);
    if (extra.blockedOmitted) out.push(`- ... and ${extra.blockedOmitted} more`);
  }
  return out.join("\n");
}
