import { isAbsolute, resolve } from "node:path";
import {
  AntlerError,
  ErrorCodes,
  formatPath,
  isAntlerError,
  type ModelConfig,
  type ModelProviderEnv,
  type PathSegment,
} from "@antler/kernel";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { z } from "zod";
import { loadCassette } from "./format.js";
import { CassetteChatModel, CassetteRecorder } from "./model.js";
import type { NormalizationDirs } from "./normalize.js";

const RECORD_FROM_REQUIRED = "is required when mode is record: name the real model to record from";

/** `options:` of a `provider: cassette` model entry. */
export const cassetteOptionsSchema = z
  .strictObject({
    path: z.string().min(1).describe("The cassette (JSON Lines), relative to the config file's folder."),
    mode: z.enum(["replay", "record"]).default("replay"),
    record_from: z.string().min(1).optional().describe("Name of the configured model to record from (mode: record)."),
    note: z.string().optional().describe("Written to the header of a new recording."),
  })
  .superRefine((value, ctx) => {
    if (value.mode === "record" && value.record_from === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["record_from"],
        message: RECORD_FROM_REQUIRED,
      });
    }
  });

export type CassetteOptions = z.output<typeof cassetteOptionsSchema>;

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** Validates `options` of a cassette entry; `where` is the entry's path, e.g. `models[2]`. */
export function parseCassetteOptions(raw: unknown, where: string): CassetteOptions {
  const result = cassetteOptionsSchema.safeParse(raw ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) => {
    const base: PathSegment[] = ["options", ...issue.path.filter((p): p is string | number => typeof p !== "symbol")];
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map(
        (key) => `${where}.${formatPath([...base, key])}: unknown key; allowed: ${Object.keys(cassetteOptionsSchema.shape).join(", ")}`,
      );
    }
    const missing = issue.code === "invalid_type" && valueAt(raw, issue.path) === undefined;
    const message = missing ? "is required" : issue.message;
    return [`${where}.${formatPath(base)}: ${message}`];
  });
  // The refinement only runs once the object itself is valid; report a missing record_from alongside the rest.
  const recordFromProblem = `${where}.options.record_from: ${RECORD_FROM_REQUIRED}`;
  if (valueAt(raw, ["mode"]) === "record" && valueAt(raw, ["record_from"]) === undefined && !problems.includes(recordFromProblem)) {
    problems.push(recordFromProblem);
  }
  throw new AntlerError(ErrorCodes.CONFIG_INVALID, `invalid cassette options:\n  ${problems.join("\n  ")}`, {
    where: `${where}.options`,
    hint: "A cassette entry looks like: options: { path: cassettes/run.jsonl, mode: replay } (mode: record also needs record_from).",
    details: { problems },
  });
}

function dirsOf(env: ModelProviderEnv): NormalizationDirs {
  return { baseDir: env.paths.baseDir, configDir: env.paths.configDir };
}

/** Builds the replaying or recording model for a `provider: cassette` entry. */
export async function createCassetteModel(config: ModelConfig, env: ModelProviderEnv): Promise<BaseChatModel> {
  const where = env.where;
  const options = parseCassetteOptions(config.options, where);
  const path = isAbsolute(options.path) ? options.path : resolve(env.paths.configDir, options.path);
  if (options.mode === "replay") {
    return new CassetteChatModel({ cassette: await loadCassette(path), dirs: dirsOf(env), where });
  }
  const source = options.record_from as string;
  if (source === config.name) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `a cassette cannot record from itself ("${source}")`, {
      where: `${where}.options.record_from`,
      hint: "Name another models: entry, the real model whose answers should be recorded.",
    });
  }
  let model: BaseChatModel;
  try {
    model = await env.createModel(source);
  } catch (err) {
    if (isAntlerError(err, ErrorCodes.MODEL_NOT_FOUND)) {
      throw new AntlerError(ErrorCodes.MODEL_NOT_FOUND, `record_from names model "${source}", which is not configured`, {
        where: `${where}.options.record_from`,
        hint: err.hint,
        cause: err,
      });
    }
    throw err;
  }
  return new CassetteRecorder({ path, model, recordedFrom: source, dirs: dirsOf(env), note: options.note });
}
