import { describe, expect, it } from "vitest";
import { isSecretVariable, scrubEnvironment } from "../src/index.js";

describe("scrubEnvironment", () => {
  it.each([
    "OPENAI_API_KEY",
    "openai_api_key",
    "MY_SECRET",
    "GITHUB_TOKEN",
    "DB_PASSWORD",
    "PGPASSWORD",
    "AWS_CREDENTIALS",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "SENTRY_DSN",
    "DATABASE_URL",
    "ANALYTICS_DATABASE_URL",
    "POSTGRES_URL",
    "REDIS_URL",
    "MONGO_URL",
    "MONGODB_URI",
    "MONGO_ATLAS_URL",
  ])("drops %s by its name", (name) => {
    expect(scrubEnvironment({ [name]: "x", KEEP: "y" })).toEqual({ KEEP: "y" });
  });

  it("drops any value that is a URL carrying user:password@, whatever the name", () => {
    expect(isSecretVariable("UPSTREAM", "https://bob:hunter2@example.com/")).toBe(true);
    expect(isSecretVariable("BROKER", "amqp://guest:guest@localhost:5672")).toBe(true);
    expect(isSecretVariable("HOMEPAGE", "https://example.com/a:b@c")).toBe(false);
    expect(isSecretVariable("HOMEPAGE", "https://example.com/")).toBe(false);
  });

  it("keeps harmless variables and drops undefined ones", () => {
    expect(
      scrubEnvironment({ PATH: "/usr/bin", HOME: "/home/a", LANG: "C.UTF-8", SERVICE_URL: "http://localhost:8080", UNSET: undefined }),
    ).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/a",
      LANG: "C.UTF-8",
      SERVICE_URL: "http://localhost:8080",
    });
  });

  it("does not modify its input", () => {
    const env = { GITHUB_TOKEN: "t", PATH: "/bin" };
    scrubEnvironment(env);
    expect(env).toEqual({ GITHUB_TOKEN: "t", PATH: "/bin" });
  });
});
