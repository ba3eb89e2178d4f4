import { z } from "zod";

export const DEFAULT_EXECUTABLE_PATH = "/usr/bin/chromium";
/** Where the browserless token is read from when `remote.token_env` is not set. */
export const DEFAULT_BROWSERLESS_TOKEN_ENV = "BROWSERLESS_TOKEN";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** `remote:` of the browser config: a hosted browser the plugin connects to instead of launching Chromium. */
export const remoteBrowserSchema = z
  .strictObject({
    provider: z.literal("browserless").describe("The remote browser service; browserless is the one supported"),
    endpoint: z
      .url({ protocol: /^wss?$/ })
      .describe("The service's CDP WebSocket URL without the token, e.g. wss://production-sfo.browserless.io"),
    token_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name (letters, digits, underscores)")
      .default(DEFAULT_BROWSERLESS_TOKEN_ENV)
      .describe("Environment variable holding the API token, read at each connect and sent as the token query parameter"),
  })
  .superRefine((remote, ctx) => {
    const url = new URL(remote.endpoint);
    if (url.searchParams.has("token")) {
      ctx.addIssue({
        code: "custom",
        path: ["endpoint"],
        message: `the endpoint carries a token query parameter; remove it and put the token in the ${remote.token_env} environment variable (remote.token_env), so it never sits in config.yaml`,
      });
    }
    if (url.protocol === "ws:" && !LOOPBACK_HOSTS.has(url.hostname)) {
      ctx.addIssue({
        code: "custom",
        path: ["endpoint"],
        message: `ws:// would send the token in clear text to ${url.hostname}; use wss:// (plain ws:// is accepted only for a loopback host)`,
      });
    }
  });

export type RemoteBrowserConfig = z.output<typeof remoteBrowserSchema>;

/** `plugins[i].config` of `@antler/tools-browser`. */
export const browserConfigSchema = z
  .object({
    executable_path: z.string().min(1).default(DEFAULT_EXECUTABLE_PATH).describe("Chromium binary to launch"),
    headless: z.boolean().default(true),
    extra_args: z.array(z.string().min(1)).default([]).describe("More Chromium command-line flags"),
    max_sessions: z.number().int().min(1).max(64).default(4).describe("Hard cap on live browser sessions (one per thread)"),
    idle_timeout_seconds: z.number().min(0).default(600).describe("Close a session unused for this long; 0 never"),
    navigation_timeout_seconds: z.number().positive().max(300).default(30),
    action_timeout_seconds: z.number().positive().max(120).default(10),
    snapshot_max_chars: z.number().int().min(500).max(200_000).default(12_000),
    text_max_chars: z.number().int().min(500).max(500_000).default(20_000),
    viewport: z
      .object({ width: z.number().int().min(200).max(4000), height: z.number().int().min(200).max(4000) })
      .default({ width: 1280, height: 800 }),
    user_agent: z.string().min(1).optional(),
    allow_private_addresses: z.boolean().default(false).describe("Let the browser reach loopback/private/link-local addresses"),
    cdp_url: z
      .url({ protocol: /^(https?|wss?)$/ })
      .optional()
      .describe("Attach to a running browser over CDP"),
    allow_unguarded_cdp: z.boolean().default(false),
    live: z
      .strictObject({
        enabled: z.boolean().default(true).describe("Serve the live view routes under /api/threads/:id/browser (with the gateway)"),
        frame_interval_ms: z.number().int().min(100).max(60_000).default(1000).describe("Frame period while nobody interacts"),
        active_frame_interval_ms: z.number().int().min(30).max(5000).default(100).describe("Frame period just after an input"),
        active_window_ms: z.number().int().min(0).max(60_000).default(1500).describe("How long an input keeps the fast frame period"),
        jpeg_quality: z.number().int().min(10).max(100).default(60),
      })
      .default({ enabled: true, frame_interval_ms: 1000, active_frame_interval_ms: 100, active_window_ms: 1500, jpeg_quality: 60 }),
    remote: remoteBrowserSchema.optional().describe("Connect to a hosted browser (browserless) instead of launching Chromium"),
  })
  .superRefine((config, ctx) => {
    if (config.remote !== undefined && config.cdp_url !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["remote"],
        message:
          "remote and cdp_url both name a browser to attach to; keep one (remote for browserless, cdp_url for any other running browser)",
      });
    }
    if (config.cdp_url !== undefined && !config.allow_unguarded_cdp) {
      ctx.addIssue({
        code: "custom",
        path: ["cdp_url"],
        message:
          "attaching to a browser over CDP bypasses the SSRF guard for everything the plugin did not create (other tabs and contexts, extensions, service workers, the browser's own flags); set allow_unguarded_cdp: true to accept that, or remove cdp_url to let the plugin launch its own Chromium",
      });
    }
  });

export type BrowserConfig = z.output<typeof browserConfigSchema>;
export type BrowserConfigInput = z.input<typeof browserConfigSchema>;
