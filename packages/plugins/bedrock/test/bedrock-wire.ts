// A loopback Amazon Bedrock runtime for the tests: Converse (JSON) and ConverseStream (AWS event-stream binary
// framing, encoded with Smithy's own codec), with the errors Bedrock sends (x-amzn-errortype + JSON message).
import { type LoopbackApi, type LoopbackReply, type LoopbackRequest, startLoopbackApi } from "@antler/model-kit/testing";
import { EventStreamCodec } from "@smithy/eventstream-codec";

/** One scripted assistant turn. */
export interface Turn {
  reasoning?: { text: string; signature: string };
  text?: string;
  toolUse?: { name: string; input: Record<string, unknown> };
  usage?: { inputTokens: number; outputTokens: number; cacheReadInputTokens?: number };
}
/** A ConverseStream that answers 200 and then fails inside the stream, as Bedrock throttles a started stream. */
export interface StreamFailure {
  streamException: string;
  message: string;
}
export interface Failure {
  status: number;
  type: string;
  message: string;
  headers?: Record<string, string>;
}
export type ContentBlock = Record<string, unknown>;
export interface ConverseBody {
  messages: Array<{ role: string; content: ContentBlock[] }>;
  system?: ContentBlock[];
  toolConfig?: { tools: Array<{ toolSpec: { name: string } }> };
  inferenceConfig?: Record<string, unknown>;
  additionalModelRequestFields?: Record<string, unknown>;
}

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);
const str = (value: string) => ({ type: "string" as const, value });

/** One event-stream message carrying a ConverseStream event (`:event-type`) with its JSON payload. */
export function eventMessage(eventType: string, payload: Record<string, unknown>): Uint8Array {
  return codec.encode({
    headers: { ":event-type": str(eventType), ":content-type": str("application/json"), ":message-type": str("event") },
    body: new TextEncoder().encode(JSON.stringify(payload)),
  });
}

const pieces = (text: string) => text.match(/\S+\s*/g) ?? [];
const usageOf = (turn: Turn) => {
  const u = turn.usage ?? { inputTokens: 25, outputTokens: 9 };
  return { ...u, totalTokens: u.inputTokens + (u.cacheReadInputTokens ?? 0) + u.outputTokens };
};

/** The events of a turn, in Bedrock's order: messageStart, per block start/deltas/stop, messageStop, metadata. */
function streamTurn(turn: Turn): Uint8Array[] {
  const out = [eventMessage("messageStart", { role: "assistant" })];
  let block = 0;
  if (turn.reasoning) {
    for (const p of pieces(turn.reasoning.text))
      out.push(eventMessage("contentBlockDelta", { contentBlockIndex: block, delta: { reasoningContent: { text: p } } }));
    out.push(
      eventMessage("contentBlockDelta", { contentBlockIndex: block, delta: { reasoningContent: { signature: turn.reasoning.signature } } }),
    );
    out.push(eventMessage("contentBlockStop", { contentBlockIndex: block++ }));
  }
  if (turn.text) {
    for (const p of pieces(turn.text)) out.push(eventMessage("contentBlockDelta", { contentBlockIndex: block, delta: { text: p } }));
    out.push(eventMessage("contentBlockStop", { contentBlockIndex: block++ }));
  }
  if (turn.toolUse) {
    const toolUseId = `tooluse_${block}`;
    out.push(eventMessage("contentBlockStart", { contentBlockIndex: block, start: { toolUse: { toolUseId, name: turn.toolUse.name } } }));
    const input = JSON.stringify(turn.toolUse.input);
    for (let at = 0; at < input.length; at += 7)
      out.push(eventMessage("contentBlockDelta", { contentBlockIndex: block, delta: { toolUse: { input: input.slice(at, at + 7) } } }));
    out.push(eventMessage("contentBlockStop", { contentBlockIndex: block++ }));
  }
  out.push(eventMessage("messageStop", { stopReason: turn.toolUse ? "tool_use" : "end_turn" }));
  out.push(eventMessage("metadata", { usage: usageOf(turn), metrics: { latencyMs: 42 } }));
  return out;
}

function jsonTurn(turn: Turn): Record<string, unknown> {
  const content: ContentBlock[] = [];
  if (turn.reasoning) content.push({ reasoningContent: { reasoningText: turn.reasoning } });
  if (turn.text) content.push({ text: turn.text });
  if (turn.toolUse) content.push({ toolUse: { toolUseId: "tooluse_0", name: turn.toolUse.name, input: turn.toolUse.input } });
  return {
    output: { message: { role: "assistant", content } },
    stopReason: turn.toolUse ? "tool_use" : "end_turn",
    usage: usageOf(turn),
    metrics: { latencyMs: 42 },
  };
}

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream)$/;

/** Which model and operation a request was for. */
export function routeOf(req: LoopbackRequest): { modelId: string; stream: boolean } | undefined {
  const m = ROUTE.exec(req.path);
  return m ? { modelId: decodeURIComponent(m[1] as string), stream: m[2] === "converse-stream" } : undefined;
}

/** Bedrock's answer to request `i`: a failure, a ConverseStream event stream, or a Converse JSON body. */
/** An event-stream exception message (`:message-type: exception`), which the SDK raises as that error. */
export function exceptionMessage(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: { ":exception-type": str(exceptionType), ":content-type": str("application/json"), ":message-type": str("exception") },
    body: new TextEncoder().encode(JSON.stringify({ message })),
  });
}

export function bedrockReply(req: LoopbackRequest, turn: Turn | Failure | StreamFailure | undefined): LoopbackReply {
  const route = routeOf(req);
  if (req.method !== "POST" || !route || !turn)
    return {
      status: 404,
      headers: { "x-amzn-errortype": "ResourceNotFoundException" },
      json: { message: `no route or turn for ${req.path}` },
    };
  if ("status" in turn)
    return {
      status: turn.status,
      headers: { "x-amzn-errortype": `${turn.type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, ...turn.headers },
      json: { message: turn.message },
    };
  if ("streamException" in turn)
    return {
      headers: { "content-type": "application/vnd.amazon.eventstream" },
      chunks: [eventMessage("messageStart", { role: "assistant" }), exceptionMessage(turn.streamException, turn.message)],
    };
  if (route.stream) return { headers: { "content-type": "application/vnd.amazon.eventstream" }, chunks: streamTurn(turn) };
  return { json: jsonTurn(turn) };
}

export function bedrockServer(turns: Array<Turn | Failure | StreamFailure>): Promise<LoopbackApi> {
  // The AWS SDK speaks HTTP/2 to Bedrock runtime (NodeHttp2Handler), so the fake does too (without TLS).
  return startLoopbackApi((req, i) => bedrockReply(req, turns[i]), { protocol: "h2c" });
}

/**
 * The shape of a SigV4 `Authorization` header (not its signature): the algorithm, the credential scope
 * `<key id>/<yyyymmdd>/<region>/bedrock/aws4_request`, the signed headers, and a 64-hex signature.
 */
export const SIGV4 =
  /^AWS4-HMAC-SHA256 Credential=(?<keyId>[A-Z0-9]+)\/(?<date>\d{8})\/(?<region>[a-z0-9-]+)\/(?<service>[a-z-]+)\/aws4_request, SignedHeaders=(?<signed>[a-z0-9;:-]+), Signature=[0-9a-f]{64}$/;
