import { appendFile, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { AntlerError, ErrorCodes } from "@antler/kernel";
import type { AIMessage, AIMessageChunk, UsageMetadata } from "@langchain/core/messages";
import { z } from "zod";
import type { NormalizedRequest } from "./normalize.js";

/** Format version in every cassette's header line; bumped only for changes old readers cannot parse. */
export const CASSETTE_FORMAT_VERSION = 1;

export const cassetteHeaderSchema = z.looseObject({
  antler_cassette: z.literal(CASSETTE_FORMAT_VERSION),
  recorded_from: z.string().optional(),
  recorded_at: z.string().optional(),
  note: z.string().optional(),
});

const normalizedToolCallSchema = z.object({ name: z.string(), args: z.unknown(), id: z.string().nullable() });

export const normalizedRequestSchema = z.object({
  messages: z.array(
    z.object({
      role: z.string(),
      content: z.string(),
      tool_calls: z.array(normalizedToolCallSchema).optional(),
      tool_call_id: z.string().optional(),
    }),
  ),
  tools: z.array(z.string()),
});

export const recordedResponseSchema = z.object({
  id: z.string().optional(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
  tool_calls: z.array(z.object({ name: z.string(), args: z.record(z.string(), z.unknown()), id: z.string().optional() })).default([]),
  usage_metadata: z.looseObject({ input_tokens: z.number(), output_tokens: z.number(), total_tokens: z.number() }).optional(),
});

export const cassetteExchangeSchema = z.object({ request: normalizedRequestSchema, response: recordedResponseSchema });

export type CassetteHeader = z.output<typeof cassetteHeaderSchema>;
export type RecordedResponse = z.output<typeof recordedResponseSchema>;
export interface CassetteExchange {
  request: NormalizedRequest;
  response: RecordedResponse;
}

/** An exchange as read from a file, with its 1-based line number for error messages. */
export interface LoadedExchange extends CassetteExchange {
  readonly line: number;
}

export interface LoadedCassette {
  readonly path: string;
  readonly header: CassetteHeader;
  readonly exchanges: readonly LoadedExchange[];
}

function invalid(path: string, line: number, message: string, cause?: unknown): AntlerError {
  return new AntlerError(ErrorCodes.CONFIG_INVALID, `cassette line ${line} ${message}`, {
    where: `${path}:${line}`,
    hint: "A cassette is JSON Lines: a header line, then one {request, response} object per line. Re-record it with mode: record.",
    cause,
  });
}

/** Parses cassette text; `path` only labels errors. */
export function parseCassette(text: string, path: string): LoadedCassette {
  let header: CassetteHeader | undefined;
  const exchanges: LoadedExchange[] = [];
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = i + 1;
    if (raw.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw invalid(path, line, `is not JSON: ${(err as Error).message}`, err);
    }
    if (!header) {
      const parsed = cassetteHeaderSchema.safeParse(value);
      if (!parsed.success) {
        throw invalid(path, line, `is not a cassette header (expected {"antler_cassette": ${CASSETTE_FORMAT_VERSION}, ...})`, parsed.error);
      }
      header = parsed.data;
      continue;
    }
    const parsed = cassetteExchangeSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalid(
        path,
        line,
        `is not a {request, response} exchange: ${issue ? `${issue.path.join(".")}: ${issue.message}` : "invalid"}`,
      );
    }
    exchanges.push({ ...(parsed.data as CassetteExchange), line });
  }
  if (!header) throw invalid(path, 1, "is missing: the file is empty");
  return { path, header, exchanges };
}

export async function loadCassette(path: string): Promise<LoadedCassette> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `cannot read cassette: ${(err as Error).message}`, {
      where: path,
      hint: "Record it first: set options.mode: record and options.record_from: <a real model> on this models: entry.",
      cause: err,
    });
  }
  return parseCassette(text, path);
}

export function cassetteHeader(fields: { recordedFrom?: string | undefined; note?: string | undefined } = {}): CassetteHeader {
  return {
    antler_cassette: CASSETTE_FORMAT_VERSION,
    recorded_from: fields.recordedFrom,
    recorded_at: new Date().toISOString(),
    note: fields.note,
  };
}

/** Writes a whole cassette (header plus one line per exchange), replacing any file at `path`. */
export async function writeCassette(
  path: string,
  exchanges: readonly CassetteExchange[],
  header: { recordedFrom?: string; note?: string } = {},
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const lines = [cassetteHeader(header), ...exchanges.map(({ request, response }) => ({ request, response }))].map((v) =>
    JSON.stringify(v),
  );
  await writeFile(path, `${lines.join("\n")}\n`);
}

/** Appends one exchange, creating the folders and the header line when the file is new or empty. */
export async function appendExchange(
  path: string,
  exchange: CassetteExchange,
  header: { recordedFrom?: string | undefined; note?: string | undefined },
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const size = await stat(path).then(
    (s) => s.size,
    () => 0,
  );
  const line = JSON.stringify({ request: exchange.request, response: exchange.response });
  await appendFile(path, size === 0 ? `${JSON.stringify(cassetteHeader(header))}\n${line}\n` : `${line}\n`);
}

/** The parts of an assistant message a cassette keeps. */
export function serializeResponse(message: AIMessage | AIMessageChunk): RecordedResponse {
  const usage: UsageMetadata | undefined = message.usage_metadata;
  return {
    ...(message.id ? { id: message.id } : {}),
    content: message.content as RecordedResponse["content"],
    tool_calls: (message.tool_calls ?? []).map((call) => ({ name: call.name, args: call.args, ...(call.id ? { id: call.id } : {}) })),
    ...(usage ? { usage_metadata: usage } : {}),
  };
}
