/**
 * Cuts `text` to at most `max` characters by dropping its middle: a command's first lines say what started
 * and its last lines say how it ended, both worth more than the bulk in between. The marker says how much was cut.
 */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (cut: number) => `\n\n[... ${cut} characters cut from the middle of the output ...]\n\n`;
  // The marker's length depends on the count it prints; sizing it with the whole length is an upper bound.
  const budget = max - marker(text.length).length;
  if (budget <= 0) return text.slice(0, max);
  const head = Math.ceil(budget / 2);
  const tail = budget - head;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}${marker(cut)}${tail > 0 ? text.slice(text.length - tail) : ""}`;
}

/** Cuts `text` to at most `max` characters at the end, followed by a note that says how to see the rest. */
export function truncateTail(text: string, max: number, hint: string): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n\n[... cut: showing the first ${max} of ${text.length} characters; ${hint}]`;
}
