import { createHash } from "node:crypto";
import type { StateField } from "@antler/kernel";
import { ReducedValue } from "@langchain/langgraph";
import { z } from "zod";
import type { SandboxLease } from "./registry.js";

/**
 * Private thread-state key (LangChain leaves `_`-prefixed keys out of the agent's input and output) holding, per
 * normalized path, the hash of the content this thread last read or wrote. It survives turns, so a file read in
 * one turn can be edited in the next, and it goes stale the moment anything else changes the file.
 */
export const READ_STAMPS_KEY = "_read_stamps";

export type ReadStamps = Record<string, string>;

/** Oldest stamps are dropped past this many paths, so a long thread's state stays small. */
export const MAX_READ_STAMPS = 512;

/** Merges stamp updates (later wins per path); `null` clears them all. */
export function mergeReadStamps(current: ReadStamps | undefined, update: ReadStamps | null | undefined): ReadStamps | undefined {
  if (update === undefined) return current;
  if (update === null) return {};
  const merged: ReadStamps = { ...(current ?? {}) };
  for (const [path, stamp] of Object.entries(update)) {
    // Re-inserting moves a path to the end, so the cap drops the least recently touched ones.
    delete merged[path];
    merged[path] = stamp;
  }
  const paths = Object.keys(merged);
  for (const path of paths.slice(0, Math.max(0, paths.length - MAX_READ_STAMPS))) delete merged[path];
  return merged;
}

const stampsSchema = z.record(z.string(), z.string());

export const readStampsField: StateField = new ReducedValue(stampsSchema.optional(), {
  inputSchema: stampsSchema.nullable().optional(),
  reducer: (a: ReadStamps | undefined, b: ReadStamps | null | undefined) => mergeReadStamps(a, b),
}) as StateField;

/** The stamp of a file's content: a SHA-256 of its text. */
export function contentStamp(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex");
}

/** What this thread last saw of `path`: this run's own reads and writes first, then the thread state. */
export function knownStamp(lease: SandboxLease, state: unknown, path: string): string | undefined {
  const own = lease.stamps.get(path);
  if (own !== undefined) return own;
  const stamps = (state as Record<string, unknown> | undefined)?.[READ_STAMPS_KEY];
  if (stamps === null || typeof stamps !== "object") return undefined;
  const stamp = (stamps as Record<string, unknown>)[path];
  return typeof stamp === "string" ? stamp : undefined;
}

/** Records that this thread now knows `content` of `path`; returns the thread-state update that persists it. */
export function stampContent(lease: SandboxLease, path: string, content: string): { [READ_STAMPS_KEY]: ReadStamps } {
  const stamp = contentStamp(content);
  lease.stamps.set(path, stamp);
  return { [READ_STAMPS_KEY]: { [path]: stamp } };
}

/**
 * The read-before-write gate for overwriting or editing an existing file: refused unless this thread read the
 * file's current content. Returns the refusal to show the model, or undefined when the edit may go ahead.
 */
export function staleReadRefusal(tool: string, path: string, known: string | undefined, current: string): string | undefined {
  if (known === undefined) {
    return (
      `${tool} refused: ${path} already exists and this thread has not read it. ` +
      `Call read_file on ${path} first so you edit its current content, then call ${tool} again.`
    );
  }
  if (known !== contentStamp(current)) {
    return (
      `${tool} refused: ${path} changed since this thread last read it (a command or another writer modified it). ` +
      `Call read_file on ${path} again to see its current content, then call ${tool} again.`
    );
  }
  return undefined;
}
