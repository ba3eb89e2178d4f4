import { rm } from "node:fs/promises";
import { type Script, ScriptedChatModel } from "@antler/kernel/testing";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type LoadedCassette, loadCassette } from "./format.js";
import { CassetteRecorder } from "./model.js";
import type { NormalizationDirs } from "./normalize.js";

export interface RecordFromScriptOptions {
  /** Where the cassette is written. An existing file is replaced unless `append` is set. */
  path: string;
  /** What the scripted model answers, as for `new ScriptedChatModel(script)`. */
  script: Script;
  /** Drives the session, e.g. builds an agent on `model` and invokes it. Every model call is recorded. */
  run: (model: BaseChatModel) => Promise<unknown>;
  /** Must match the folders the replay will run with, or paths in prompts will not match. */
  dirs?: NormalizationDirs | undefined;
  note?: string | undefined;
  append?: boolean | undefined;
}

/**
 * Records a cassette from a scripted session: `run` drives a `ScriptedChatModel` through the cassette recorder,
 * so the file holds the exact requests the real code makes, with answers from the script. This is how offline
 * demo cassettes are produced without a real model.
 */
export async function recordCassetteFromScript(
  options: RecordFromScriptOptions,
): Promise<LoadedCassette & { scripted: ScriptedChatModel }> {
  if (!options.append) await rm(options.path, { force: true });
  const scripted = new ScriptedChatModel(options.script);
  const recorder = new CassetteRecorder({
    path: options.path,
    model: scripted,
    recordedFrom: "scripted",
    dirs: options.dirs,
    note: options.note ?? "recorded from a scripted session",
  });
  await options.run(recorder);
  await recorder.flush();
  return { ...(await loadCassette(options.path)), scripted };
}
