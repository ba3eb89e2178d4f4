import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** One span as an OTLP/HTTP JSON export carries it, flattened with its resource's service name. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: number;
  readonly service: string | undefined;
  readonly attributes: Record<string, string | number | boolean>;
  readonly status: { code?: number; message?: string };
  readonly startNs: bigint;
  readonly endNs: bigint;
}

export interface OtlpReceiver {
  /** The traces endpoint, `http://127.0.0.1:<port>/v1/traces`. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Headers of every export request, in arrival order. */
  readonly exports: IncomingHttpHeaders[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };

function decodeValue(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return JSON.stringify(v);
}

function attributesOf(list: Array<{ key: string; value: AnyValue }> | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, decodeValue(a.value)]));
}

/**
 * A real OTLP/HTTP receiver on loopback: it accepts `POST /v1/traces` with the OTLP JSON encoding (what
 * `@opentelemetry/exporter-trace-otlp-http` sends), decodes every span and answers as a collector does. Anything
 * else (another path, protobuf) is a 415/404, so an exporter that changes its encoding fails the test.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const exports: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      if (!String(req.headers["content-type"] ?? "").startsWith("application/json")) {
        res.writeHead(415, { "content-type": "application/json" }).end(JSON.stringify({ message: "only OTLP JSON here" }));
        return;
      }
      exports.push(req.headers);
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans?: Array<{
          resource?: { attributes?: Array<{ key: string; value: AnyValue }> };
          scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
        }>;
      };
      for (const rs of body.resourceSpans ?? []) {
        const service = attributesOf(rs.resource?.attributes)["service.name"];
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: String(s.traceId),
              spanId: String(s.spanId),
              parentSpanId: s.parentSpanId ? String(s.parentSpanId) : undefined,
              name: String(s.name),
              kind: Number(s.kind),
              service: typeof service === "string" ? service : undefined,
              attributes: attributesOf(s.attributes as Array<{ key: string; value: AnyValue }>),
              status: (s.status as { code?: number; message?: string }) ?? {},
              startNs: BigInt(String(s.startTimeUnixNano)),
              endNs: BigInt(String(s.endTimeUnixNano)),
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
