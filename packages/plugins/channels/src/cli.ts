import { type ParseArgsConfig, parseArgs } from "node:util";
import { AntlerError, type CliCommand, type CliIO, DEFAULT_USER_ID, type Kernel } from "@antler/kernel";
import type { ChannelsHost } from "./host.js";

const write = (stream: NodeJS.WritableStream, text: string) => stream.write(text.endsWith("\n") ? text : `${text}\n`);

function parse(args: string[], options: NonNullable<ParseArgsConfig["options"]>, usage: string) {
  try {
    const parsed = parseArgs({
      args,
      options: { ...options, config: { type: "string", short: "c" } },
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
  } catch (err) {
    throw new AntlerError("ANTLER_ERR_CHANNEL_USAGE", (err as Error).message, { hint: `Usage: ${usage}` });
  }
}

function requireProvider(host: ChannelsHost, id: string | undefined, usage: string): string {
  const known = host.ids();
  if (!id || !known.includes(id)) {
    throw new AntlerError("ANTLER_ERR_CHANNEL_UNKNOWN", id ? `no channel provider "${id}" is configured` : "give a channel provider", {
      hint:
        known.length > 0
          ? `Configured: ${known.join(", ")}. Usage: ${usage}`
          : "Add a provider plugin such as @antler/plugin-channel-telegram or @antler/plugin-channel-slack to plugins: in config.yaml.",
    });
  }
  return id;
}

/** `antler channels connect|bindings|revoke|run`. The CLI acts as the operator. */
export function channelCommands(resolve: (kernel: Kernel) => ChannelsHost): CliCommand[] {
  const CONNECT = "antler channels connect <provider> [--user <id>]";
  const REVOKE = "antler channels revoke <provider> <platform user id>";
  return [
    {
      name: "channels connect",
      summary: "Issue a one-time code that binds a chat user to an Antler user when they send /connect <code> to the bot.",
      usage: CONNECT,
      async run(args: string[], io: CliIO) {
        const { values, positionals } = parse(args, { user: { type: "string", short: "u" } }, CONNECT);
        const host = resolve(io.kernel);
        const provider = requireProvider(host, positionals[0], CONNECT);
        const user = (values.user as string | undefined) ?? DEFAULT_USER_ID;
        const { code, expiresAt } = await host.store.issueConnectCode(provider, user, host.config.connect_code_ttl_seconds * 1000);
        const minutes = Math.round(host.config.connect_code_ttl_seconds / 60);
        write(io.stdout, `Send this to the bot within ${minutes} minutes: /connect ${code}`);
        write(io.stderr, `(binds to user ${user}; expires ${expiresAt})`);
        return 0;
      },
    },
    {
      name: "channels bindings",
      summary: "List the chat users bound to Antler users.",
      usage: "antler channels bindings [provider]",
      async run(args: string[], io: CliIO) {
        const { positionals } = parse(args, {}, "antler channels bindings [provider]");
        const rows = await resolve(io.kernel).store.bindings(positionals[0]);
        for (const row of rows) write(io.stdout, `${row.provider}:${row.platform_user_id}  →  ${row.user_id}  (since ${row.created_at})`);
        if (rows.length === 0) write(io.stderr, "no bindings");
        return 0;
      },
    },
    {
      name: "channels revoke",
      summary: "Remove a chat user's binding: their next message gets the how-to-connect reply.",
      usage: REVOKE,
      async run(args: string[], io: CliIO) {
        const { positionals } = parse(args, {}, REVOKE);
        const host = resolve(io.kernel);
        const provider = requireProvider(host, positionals[0], REVOKE);
        const platformUser = positionals[1];
        if (!platformUser) throw new AntlerError("ANTLER_ERR_CHANNEL_USAGE", "give the platform user id", { hint: `Usage: ${REVOKE}` });
        const removed = await host.store.unbind(provider, platformUser);
        write(
          removed ? io.stdout : io.stderr,
          removed ? `revoked ${provider}:${platformUser}` : `no binding for ${provider}:${platformUser}`,
        );
        return removed ? 0 : 1;
      },
    },
    {
      name: "channels run",
      summary: "Receive chat messages by long connection (Telegram long polling, Slack Socket Mode) in this process until SIGINT/SIGTERM.",
      usage: "antler channels run",
      async run(args: string[], io: CliIO) {
        parse(args, {}, "antler channels run");
        const host = resolve(io.kernel);
        await io.kernel.start();
        const { AntlerClient, untilShutdown } = await import("@antler/plugin-runtime");
        const client = new AntlerClient({ kernel: io.kernel });
        const stop = host.startReceiving(client);
        write(io.stderr, `channels receiving: ${host.ids().join(", ") || "no providers"} (Ctrl-C to stop)`);
        const keepAlive = setInterval(() => {}, 1 << 30);
        await untilShutdown().reason;
        clearInterval(keepAlive);
        await stop();
        await host.runtime(client).close();
        await client.close();
        return 0;
      },
    },
  ];
}
