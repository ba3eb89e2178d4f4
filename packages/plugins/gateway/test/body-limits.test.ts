import { readdirSync } from "node:fs";
import { connect } from "node:net";
import { threadPaths } from "@antler/kernel";
import { errorResponseSchema } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { ALICE_KEY, generatedBody, sendStreamed, startTestGateway, watchRss } from "./fixtures.js";

const GiB = 1024 * 1024 * 1024;
const MiB = 1024 * 1024;
const BOUNDARY = "----antler-test-boundary";

function filePartHead(name: string) {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
}

/** Sends only the request head and waits for whatever the server answers (the body is never sent). */
function headOnly(url: string, head: string, timeoutMs = 3000): Promise<{ text: string; ms: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(Number(port), hostname, () => socket.write(head));
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms; got so far: ${JSON.stringify(text)}`));
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const split = text.indexOf("\r\n\r\n");
      const length = Number(/content-length:\s*(\d+)/i.exec(text)?.[1] ?? "0");
      if (split !== -1 && text.length >= split + 4 + length) {
        clearTimeout(timer);
        socket.destroy();
        resolve({ text, ms: performance.now() - started });
      }
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

describe("request bodies are bounded while they stream in", () => {
  it("a 1 GiB chunked upload is refused with the coded 413 within 2 s of passing the per-file limit, RSS growing < 64 MiB, and no file is left", async () => {
    const gw = await startTestGateway({ kernelConfig: { uploads: { max_file_bytes: 1 * MiB, max_files: 4 } } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const rss = watchRss();
    const answer = await sendStreamed(`${gw.url}/api/threads/t/uploads`, {
      headers: {
        authorization: `Bearer ${ALICE_KEY}`,
        "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
        "x-trace-id": "big-upload",
      },
      body: generatedBody(GiB, { head: filePartHead("huge.bin"), tail: `\r\n--${BOUNDARY}--\r\n` }),
      limitBytes: 1 * MiB,
    });
    const growth = rss.stop();
    expect(answer.status).toBe(413);
    expect(answer.headers["x-trace-id"]).toBe("big-upload");
    expect(answer.msAfterLimit).toBeLessThan(2000);
    expect(answer.sentBytes).toBeLessThan(256 * MiB);
    expect(growth).toBeLessThan(64 * MiB);
    const error = errorResponseSchema.parse(JSON.parse(answer.body)).error;
    expect(error).toMatchObject({ code: "ANTLER_ERR_GATEWAY_PAYLOAD_TOO_LARGE", message: "huge.bin is over the limit of 1048576 bytes" });
    expect(error.details).toMatchObject({ max_bytes: MiB, limit: "uploads.max_file_bytes" });
    // Neither a visible upload nor a temp file stays behind.
    const uploads = threadPaths(gw.baseDir, "alice", "t").uploads;
    expect(readdirSync(uploads)).toEqual([]);
  });

  it("many files each under the limit are refused with 413 once the whole request passes its limit", async () => {
    const gw = await startTestGateway({ kernelConfig: { uploads: { max_file_bytes: 256 * 1024, max_files: 2 } } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    async function* manyFiles() {
      for (let i = 0; i < 1000; i++) yield* generatedBody(200 * 1024, { head: `${i === 0 ? "" : "\r\n"}${filePartHead(`f${i}.bin`)}` });
      yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
    }
    const answer = await sendStreamed(`${gw.url}/api/threads/t/uploads`, {
      headers: { authorization: `Bearer ${ALICE_KEY}`, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body: manyFiles(),
      limitBytes: 2 * 256 * 1024 + 64 * 1024,
    });
    expect(answer.status).toBe(413);
    expect(answer.msAfterLimit).toBeLessThan(2000);
    expect(JSON.parse(answer.body).error.message).toBe(`the upload request is over the limit of ${2 * 256 * 1024 + 64 * 1024} bytes`);
    expect(readdirSync(threadPaths(gw.baseDir, "alice", "t").uploads)).toEqual([]);
  });

  it("a streamed upload within the limits is saved under its own name, and no temp file remains", async () => {
    const gw = await startTestGateway({ kernelConfig: { uploads: { max_file_bytes: 4 * MiB, max_files: 2 } } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const answer = await sendStreamed(`${gw.url}/api/threads/t/uploads`, {
      headers: { authorization: `Bearer ${ALICE_KEY}`, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body: generatedBody(3 * MiB + 7, { head: filePartHead("data.bin"), tail: `\r\n--${BOUNDARY}--\r\n`, chunkSize: 65_521 }),
      limitBytes: Number.POSITIVE_INFINITY,
    });
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body).files).toMatchObject([{ filename: "data.bin", size: 3 * MiB + 7 }]);
    expect(readdirSync(threadPaths(gw.baseDir, "alice", "t").uploads)).toEqual(["data.bin"]);
  });

  it("a 700 MB chunked JSON body to runs/wait gets the coded JSON 413 within 2 s of passing max_json_bytes, RSS growing < 64 MiB", async () => {
    const gw = await startTestGateway();
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const rss = watchRss();
    const answer = await sendStreamed(`${gw.url}/api/threads/t/runs/wait`, {
      headers: { authorization: `Bearer ${ALICE_KEY}`, "content-type": "application/json" },
      body: generatedBody(700_000_000, { head: '{"message":"', tail: '"}' }),
      limitBytes: 1024 * 1024,
    });
    const growth = rss.stop();
    expect(answer.status).toBe(413);
    expect(answer.headers["content-type"]).toContain("application/json");
    expect(answer.headers["x-trace-id"]).toMatch(/^[0-9a-f]{32}$/);
    expect(answer.msAfterLimit).toBeLessThan(2000);
    expect(growth).toBeLessThan(64 * MiB);
    const error = errorResponseSchema.parse(JSON.parse(answer.body)).error;
    expect(error).toMatchObject({
      code: "ANTLER_ERR_GATEWAY_PAYLOAD_TOO_LARGE",
      message: "the JSON body is over the limit of 1048576 bytes",
    });
    expect(error.details).toMatchObject({ limit: "max_json_bytes", max_bytes: 1048576 });
    expect(gw.client.activeRuns).toBe(0);
  });

  it("a 200 MB body with Content-Length is refused from the header, before a byte of it is sent", async () => {
    const gw = await startTestGateway({ kernelConfig: { uploads: { max_file_bytes: 1 * MiB, max_files: 4 } } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const host = new URL(gw.url).host;
    for (const [path, type] of [
      ["/api/threads/t/uploads", `multipart/form-data; boundary=${BOUNDARY}`],
      ["/api/threads/t/runs/wait", "application/json"],
    ] as const) {
      const { text, ms } = await headOnly(
        gw.url,
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${ALICE_KEY}\r\nContent-Type: ${type}\r\nContent-Length: 200000000\r\n\r\n`,
      );
      expect(text.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
      expect(text).toMatch(/\r\nx-trace-id: [0-9a-f]{32}\r\n/i);
      expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)).error).toMatchObject({
        code: "ANTLER_ERR_GATEWAY_PAYLOAD_TOO_LARGE",
        details: { size: 200000000 },
      });
      expect(ms).toBeLessThan(1000);
    }
  });
});
