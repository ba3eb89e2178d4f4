import { describe, expect, it } from "vitest";
import { errorText, mcpPluginConfigSchema, mcpToolName, parseExtensionsConfig, toToolContent } from "../src/index.js";

describe("MCP tool names", () => {
  it("prefixes with the server and sanitizes to [a-zA-Z0-9_-]{1,64}", () => {
    expect(mcpToolName("everything", "get-sum", true)).toBe("everything_get-sum");
    expect(mcpToolName("fs", "read.file/v2", false)).toBe("read_file_v2");
    expect(mcpToolName("s", "x".repeat(100), true)).toHaveLength(64);
  });
});

describe("MCP results", () => {
  it("joins text into a string, keeps images as image blocks, shows resource text and notes blobs", () => {
    expect(
      toToolContent([
        { type: "text", text: "a" },
        { type: "resource", resource: { uri: "u", text: "b" } },
      ]),
    ).toBe("a\nb");
    expect(
      toToolContent([
        { type: "text", text: "pic" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///x.bin", blob: "AAAA", mimeType: "application/octet-stream" } },
      ]),
    ).toEqual([
      { type: "text", text: "pic" },
      { type: "image", data: "AAAA", mimeType: "image/png" },
      { type: "text", text: "[binary resource file:///x.bin application/octet-stream (3 bytes) not shown]" },
    ]);
    expect(errorText([{ type: "text", text: "bad input" }])).toBe("bad input");
  });
});

describe("MCP result size", () => {
  it("cuts over-long text in the middle, keeping head and tail and saying how much went", () => {
    const text = `HEAD${"x".repeat(5000)}TAIL`;
    const out = toToolContent([{ type: "text", text }], undefined, 1000) as string;
    expect(out.startsWith("HEAD")).toBe(true);
    expect(out.endsWith("TAIL")).toBe(true);
    expect(out).toContain(`[… ${text.length - 1000} characters of this tool result omitted (result_max_chars: 1000) …]`);
    expect(out.length).toBeLessThan(1200);
    // Under the limit: untouched.
    expect(toToolContent([{ type: "text", text: "short" }], undefined, 1000)).toBe("short");
  });

  it("holds structured-only results to the limit too, and replaces an oversized image with a note", () => {
    const structured = { rows: Array.from({ length: 500 }, (_, i) => ({ i, name: `row ${i}` })) };
    expect((toToolContent([], structured, 2000) as string).length).toBeLessThan(2200);
    const huge = toToolContent([{ type: "image", data: "A".repeat(9 * 1024 * 1024), mimeType: "image/png" }], undefined, 1000);
    expect(huge).toMatch(/^\[image image\/png of \d+ bytes not shown: too large\]$/);
  });
});

describe("MCP config", () => {
  it("requires command for stdio and url for http, with defaults applied", () => {
    expect(mcpPluginConfigSchema.safeParse({ servers: { a: { transport: "stdio" } } }).success).toBe(false);
    expect(mcpPluginConfigSchema.safeParse({ servers: { a: { transport: "http" } } }).success).toBe(false);
    const ok = mcpPluginConfigSchema.parse({ servers: { a: { transport: "http", url: "http://localhost:1/mcp" } } });
    expect(ok.servers.a).toMatchObject({ enabled: true, tool_name_prefix: true, init_timeout_seconds: 30, call_timeout_seconds: 120 });
  });

  it("reads DeerFlow's mcpServers format and reports a bad entry with its path", () => {
    const servers = parseExtensionsConfig(
      JSON.stringify({
        mcpServers: { fs: { command: "npx", args: ["-y", "x"], enabled: false, routing: {} }, web: { type: "sse", url: "http://h/sse" } },
      }),
      "ext.json",
    );
    expect(servers.fs).toMatchObject({ transport: "stdio", command: "npx", enabled: false });
    expect(servers.web).toMatchObject({ transport: "sse", url: "http://h/sse" });
    expect(() => parseExtensionsConfig(JSON.stringify({ mcpServers: { bad: { type: "http" } } }), "ext.json")).toThrow(/mcpServers\.bad/);
  });

  it("accepts oauth only on http/sse servers and requires refresh_token for that grant", () => {
    const oauth = { grant: "client_credentials", token_url: "http://localhost:1/token", client_id: "c" };
    expect(mcpPluginConfigSchema.safeParse({ servers: { a: { transport: "http", url: "http://localhost:1/mcp", oauth } } }).success).toBe(
      true,
    );
    expect(mcpPluginConfigSchema.safeParse({ servers: { a: { transport: "stdio", command: "x", oauth } } }).success).toBe(false);
    const refresh = { ...oauth, grant: "refresh_token" };
    expect(
      mcpPluginConfigSchema.safeParse({ servers: { a: { transport: "sse", url: "http://localhost:1/sse", oauth: refresh } } }).success,
    ).toBe(false);
  });
});
