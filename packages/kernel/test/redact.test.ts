import { describe, expect, it } from "vitest";
import { AntlerError, ErrorCodes, REDACTED, redactSecrets, redactText } from "../src/index.js";

// A syntactically real JWT (header {"alg":"HS256"}, payload {"sub":"1234"}); the signature part is arbitrary.
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLWJ5dGVz_x-y";

describe("redactSecrets: every shape", () => {
  it.each<[string, unknown, unknown]>([
    ["nested arrays under api_key", { api_key: [["sk-one", "sk-two"], ["plain"]] }, { api_key: REDACTED }],
    ["an object under Authorization", { Authorization: { scheme: "Bearer", credentials: "abc" } }, { Authorization: REDACTED }],
    ["an object under client_secret", { client_secret: { value: "s3cret", rotated: false } }, { client_secret: REDACTED }],
    ["an array under token", { token: ["a", "b"] }, { token: REDACTED }],
    ["a number under password", { password: 123456 }, { password: REDACTED }],
    ["camelCase apiKey", { apiKey: "v" }, { apiKey: REDACTED }],
    ["upper-case API-KEY", { "API-KEY": "v" }, { "API-KEY": REDACTED }],
    ["the x-api-key header", { headers: { "x-api-key": "v", accept: "json" } }, { headers: { "x-api-key": REDACTED, accept: "json" } }],
    ["a Cookie header", { headers: { Cookie: "sid=abc" } }, { headers: { Cookie: REDACTED } }],
    ["password_confirmation (secret word not last)", { password_confirmation: "hunter2" }, { password_confirmation: REDACTED }],
    ["a plural api_keys list", { api_keys: ["k1", "k2"] }, { api_keys: REDACTED }],
    ["DATABASE_URL", { DATABASE_URL: "postgres://h/db" }, { DATABASE_URL: REDACTED }],
    ["a JWT in free text under any key", { note: `got ${JWT} back` }, { note: `got ${REDACTED} back` }],
    ["a JWT as an array element", { items: ["ok", JWT] }, { items: ["ok", REDACTED] }],
    ["a JWT as a key's whole value deep inside", { a: { b: [{ c: JWT }] } }, { a: { b: [{ c: REDACTED }] } }],
    ["a bearer token in text", { msg: "sent Bearer abcdef123456 upstream" }, { msg: `sent Bearer ${REDACTED} upstream` }],
    ["a lower-case bearer token", { msg: "authorization: bearer abcdef123456" }, { msg: `authorization: bearer ${REDACTED}` }],
    ["a URL with a password", { target: "postgres://app:hunter2@db:5432/x" }, { target: `postgres://app:${REDACTED}@db:5432/x` }],
    [
      "secrets in URL query parameters",
      { url: "https://api.example/v1?api_key=abc123&access_token=zzz&q=1" },
      { url: `https://api.example/v1?api_key=${REDACTED}&access_token=${REDACTED}&q=1` },
    ],
    [
      "JSON-encoded secrets inside a string",
      { body: '{"password":"hunter2","client_secret": "abc","user":"ann"}' },
      { body: `{"password":"${REDACTED}","client_secret": "${REDACTED}","user":"ann"}` },
    ],
    ["a well-known provider key in text", { err: "401 for sk-abcdefghijklmnopqrstuv" }, { err: `401 for ${REDACTED}` }],
    ["token_usage is not a secret", { token_usage: { input: 10, output: 5 } }, { token_usage: { input: 10, output: 5 } }],
    ["max_tokens is not a secret", { max_tokens: 4096 }, { max_tokens: 4096 }],
    ["tokens is not a secret", { tokens: ["hello", "world"], token_count: 2 }, { tokens: ["hello", "world"], token_count: 2 }],
    [
      "words that merely contain a secret word",
      { keyboard: "qwerty", secretary: "Ann", passage: "text", monkey: 1, token_budget: { enabled: true } },
      { keyboard: "qwerty", secretary: "Ann", passage: "text", monkey: 1, token_budget: { enabled: true } },
    ],
    [
      "booleans and empty values under secret keys stay (nothing to hide)",
      { password: "", token: null, auth: false },
      { password: "", token: null, auth: false },
    ],
    [
      "a PEM private key block in text, and one cut off before its END line",
      { a: "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nbye", b: "-----BEGIN PRIVATE KEY-----\nMIIEvQ" },
      { a: `key:\n${REDACTED}\nbye`, b: REDACTED },
    ],
    [
      "aws_secret_access_key= inside text",
      { env: "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG x=1" },
      { env: `aws_secret_access_key=${REDACTED} x=1` },
    ],
    ["a quoted value with spaces", { env: "export DB_PASSWORD = 'two words'" }, { env: `export DB_PASSWORD = '${REDACTED}'` }],
    [
      "an identifier-shaped name with a bare colon",
      { yaml: "AWS_SECRET_ACCESS_KEY: abc/def" },
      { yaml: `AWS_SECRET_ACCESS_KEY: ${REDACTED}` },
    ],
    ["a secret name anywhere in text, any case", { log: "cfg.apiToken=tok-1;next" }, { log: `cfg.apiToken=${REDACTED};next` }],
    [
      "suffixed key names",
      { apiKeyObj: { id: "v" }, private_key_pem: "v", token_value: "v", signing_secret_b64: "v", auth_json: { a: 1 } },
      { apiKeyObj: REDACTED, private_key_pem: REDACTED, token_value: REDACTED, signing_secret_b64: REDACTED, auth_json: REDACTED },
    ],
    [
      "numeric secrets, under keys and in text",
      { card_pin: 4821, otp: 771204, cvv: 123, note: '{"api_token": 993311, "n": 5}', q: "pin=1234&n=5" },
      { card_pin: REDACTED, otp: REDACTED, cvv: REDACTED, note: `{"api_token": ${REDACTED}, "n": 5}`, q: `pin=${REDACTED}&n=5` },
    ],
    [
      "names that only look near a secret stay visible",
      { key_id: "k1", token_type: "Bearer", token_count: 3, value: "v", keyboard_layout: "us", spinner: 1 },
      { key_id: "k1", token_type: "Bearer", token_count: 3, value: "v", keyboard_layout: "us", spinner: 1 },
    ],
    [
      "prose and config paths in an error message stay readable",
      { msg: "Invalid token: expired; retry=3", cfg: 'config authorization.default_role: default_role "guest" is unknown' },
      { msg: "Invalid token: expired; retry=3", cfg: 'config authorization.default_role: default_role "guest" is unknown' },
    ],
    ["plain text with no secret", { msg: "Basic facts about tokens: 12 used" }, { msg: "Basic facts about tokens: 12 used" }],
  ])("%s", (_label, input, expected) => {
    expect(redactSecrets(input)).toEqual(expected);
  });

  it("never changes its input", () => {
    const input = { api_key: ["k"], note: JWT };
    redactSecrets(input);
    expect(input).toEqual({ api_key: ["k"], note: JWT });
  });

  it("replaces a cycle with a marker instead of recursing forever, and keeps shared (non-cyclic) objects", () => {
    const shared = { password: "p" };
    const input: Record<string, unknown> = { name: "x", a: shared, b: shared };
    input.self = input;
    const out = redactSecrets(input) as Record<string, unknown>;
    expect(out).toEqual({ name: "x", a: { password: REDACTED }, b: { password: REDACTED }, self: "[Circular]" });
    expect(() => JSON.stringify(out)).not.toThrow();
  });

  it("stops at a bounded depth, replacing what lies deeper so nothing unscanned leaks", () => {
    let deep: Record<string, unknown> = { secret_tail: "leak-me", note: JWT };
    for (let i = 0; i < 500; i++) deep = { next: deep };
    const text = JSON.stringify(redactSecrets(deep));
    expect(text).not.toContain("leak-me");
    expect(text).not.toContain(JWT);
    expect(text).toContain("[Truncated]");
  });

  it("keeps an Error's type, and redacts its message, stack and own fields", () => {
    const err = Object.assign(new Error(`upstream said Bearer abcdef123456 for ${JWT}`), { code: "E_UP", token: "t" });
    const out = redactSecrets({ err }) as unknown as { err: Record<string, unknown> };
    expect(out.err).toMatchObject({
      type: "Error",
      message: `upstream said Bearer ${REDACTED} for ${REDACTED}`,
      code: "E_UP",
      token: REDACTED,
    });
    expect(String(out.err.stack)).not.toContain("abcdef123456");
  });

  it("redacts an object that serialises itself (toJSON) in its serialised shape", () => {
    const value = { toJSON: () => ({ kind: "msg", api_key: "k", text: JWT }) };
    expect(redactSecrets({ value })).toEqual({ value: { kind: "msg", api_key: REDACTED, text: REDACTED } });
  });
});

describe("redactText", () => {
  it("scrubs a JWT anywhere in free text", () => {
    expect(redactText(`a=${JWT};b`)).toBe(`a=${REDACTED};b`);
  });

  it("leaves prose that names a secret word without assigning one", () => {
    const text = "no E2B API key: E2B_API_KEY is not set; the token: see the docs";
    expect(redactText(text)).toBe(text);
  });
});

describe("redactText in prose mode (memory facts, run inputs)", () => {
  it("scrubs secrets stated in words only when asked, so error messages keep their words", () => {
    const text = "my password is Tr0ub4dor&3 and the PIN is 4821";
    expect(redactText(text)).toBe(text);
    expect(redactText(text, { prose: true })).toBe(`my password is ${REDACTED} and the PIN is ${REDACTED}`);
  });
});

describe("AntlerError", () => {
  it("carries redacted details and message, so every consumer (HTTP, logs, records) gets the scrubbed form", () => {
    const err = new AntlerError(ErrorCodes.CONFIG_INVALID, `cannot reach postgres://app:hunter2@db/x with ${JWT}`, {
      details: { headers: { Authorization: ["Bearer abc"] }, note: JWT, token_name: "antler.runStore" },
    });
    expect(err.message).toBe(`cannot reach postgres://app:${REDACTED}@db/x with ${REDACTED}`);
    expect(err.details).toEqual({ headers: { Authorization: REDACTED }, note: REDACTED, token_name: "antler.runStore" });
    expect(JSON.stringify(err)).not.toContain("hunter2");
  });
});

describe("redactText on hostile input", () => {
  it("scrubs a megabyte of unbroken letters in linear time (a denial-of-service regression: it once took minutes)", () => {
    const letters = "a".repeat(1024 * 1024);
    const started = performance.now();
    expect(redactText(`${letters} postgres://app:hunter2@db/x`)).toBe(`${letters} postgres://app:${REDACTED}@db/x`);
    // Quadratic matching needs minutes here; linear needs milliseconds. The bound only separates the two.
    expect(performance.now() - started).toBeLessThan(3000);
  });
});
