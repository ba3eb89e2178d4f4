/** Longest result brief a task result carries. */
export const RESULT_BRIEF_CHARS = 2000;

/** At most `max` characters: the head and the tail of `text`, with how much was left out in between. */
export function resultBrief(text: string, max = RESULT_BRIEF_CHARS): string {
  if (text.length <= max) return text;
  const marker = (omitted: number) => `\n…[${omitted} characters omitted]…\n`;
  // The marker's length depends on the number it prints; size it for the worst case.
  const room = max - marker(text.length).length;
  const head = Math.ceil(room * 0.6);
  const tail = room - head;
  return `${text.slice(0, head)}${marker(text.length - head - tail)}${text.slice(text.length - tail)}`;
}
