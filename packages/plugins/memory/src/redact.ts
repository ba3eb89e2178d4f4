import { REDACTED, redactText } from "@antler/kernel";

/**
 * Scrubs credentials from text before it becomes a memory fact or profile field. This is the kernel's `redactText`
 * (the one redactor that run records and logs use too) with `prose: true`, which also catches secrets stated in
 * words ("my password is ...").
 */
export function redactMemoryText(text: string): string {
  return redactText(text, { prose: true });
}

export { REDACTED };
