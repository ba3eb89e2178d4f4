// Prompt tokens with 200 MCP tools: bound (every schema sent on every model call) against deferred (names in the
// prompt, tool_search bound), after one real agent turn each through AntlerClient and the whole default pipeline.
// What is counted is what a provider receives: the system message the model got plus its bound tools serialized
// as OpenAI function tools, with real tokenizers (js-tiktoken's bundled o200k_base and cl100k_base ranks; nothing
// is downloaded). It runs two turns and counts tokens, in seconds, so BENCH_SMOKE=1 changes nothing. Run after a build:
//   node packages/plugins/tool-search/bench/tokens.bench.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin } from "@antler/kernel";
import { ScriptedChatModel } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { SystemMessage } from "@langchain/core/messages";
import { DynamicStructuredTool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { Tiktoken } from "js-tiktoken/lite";
import cl100k from "js-tiktoken/ranks/cl100k_base";
import o200k from "js-tiktoken/ranks/o200k_base";
import toolSearchPlugin from "../dist/index.js";

// ---- 200 MCP-shaped tools: 10 servers x 20 tools, schemas shaped like real servers' (descriptions on every
// property, enums, arrays, nested filters, required lists). Deterministic.
const SERVERS = {
  github: ["repository", "issue", "pull request", "branch", "release", "workflow run", "commit", "label", "milestone", "gist"],
  slack: ["channel", "message", "thread reply", "user", "reaction", "file", "reminder", "bookmark", "user group", "scheduled message"],
  jira: ["issue", "project", "sprint", "board", "comment", "worklog", "version", "component", "filter", "epic"],
  postgres: ["table", "query", "index", "schema", "view", "role", "extension", "function", "trigger", "sequence"],
  gdrive: ["file", "folder", "permission", "comment", "revision", "shared drive", "label", "shortcut", "spreadsheet", "document"],
  calendar: ["event", "calendar", "attendee", "reminder", "free busy slot", "recurring series", "room", "acl rule", "color", "setting"],
  notion: ["page", "database", "block", "comment", "user", "property", "view", "template", "workspace", "relation"],
  linear: ["issue", "team", "cycle", "project", "label", "comment", "workflow state", "roadmap", "attachment", "initiative"],
  stripe: ["customer", "invoice", "payment intent", "subscription", "refund", "price", "product", "coupon", "payout", "dispute"],
  browser: ["page", "tab", "element", "screenshot", "cookie", "download", "form field", "frame", "console message", "network request"],
};
const VERBS = [
  [
    "list",
    "Lists {o}s visible to the authenticated account, newest first, with pagination. Use filters to narrow the result instead of paging through everything.",
  ],
  [
    "get",
    "Returns one {o} with all of its fields, including metadata that list results leave out. Fails with a not-found error when the identifier does not exist or is not visible.",
  ],
];
const EXTRA_VERBS = [
  "create",
  "update",
  "delete",
  "search",
  "archive",
  "restore",
  "export",
  "move",
  "duplicate",
  "watch",
  "unwatch",
  "lock",
  "unlock",
  "assign",
  "tag",
  "sync",
  "validate",
  "summarize",
];

function property(i, name) {
  const kinds = [
    { type: "string", description: `The ${name} to use. Accepts the identifier shown in the web interface or the API's opaque id.` },
    { type: "integer", minimum: 1, maximum: 100, default: 30, description: `How many results to return per page (1-100).` },
    { type: "string", enum: ["asc", "desc"], default: "desc", description: "Sort direction of the results." },
    {
      type: "array",
      items: { type: "string" },
      description: `Names of ${name}s to include. Unknown names are ignored and reported in the warnings field.`,
    },
    { type: "boolean", default: false, description: `Whether to include archived or deleted ${name}s as well.` },
    {
      type: "object",
      description: `Filter applied before pagination.`,
      properties: {
        created_after: { type: "string", format: "date-time", description: "Only items created after this ISO 8601 time." },
        state: { type: "string", enum: ["open", "closed", "all"], description: "Lifecycle state to match." },
        author: { type: "string", description: "Login or email of the author." },
      },
    },
  ];
  return kinds[i % kinds.length];
}

function buildTools() {
  const tools = [];
  for (const [server, objects] of Object.entries(SERVERS)) {
    const verbs = [
      ...VERBS,
      ...EXTRA_VERBS.map((v) => [
        v,
        `${v[0].toUpperCase()}${v.slice(1)}s a {o}. The change is applied at once and is visible to every collaborator; the response carries the {o} as it is afterwards.`,
      ]),
    ];
    for (let t = 0; t < 20; t++) {
      const object = objects[t % objects.length];
      const [verb, template] = verbs[t % verbs.length];
      const slug = `${verb}_${object.replace(/ /g, "_")}${t >= objects.length && t % verbs.length < 2 ? "s" : ""}`;
      const properties = { [`${object.replace(/ /g, "_")}_id`]: { type: "string", description: `Identifier of the ${object}.` } };
      const count = 2 + ((t * 7 + server.length) % 5);
      for (let p = 0; p < count; p++) {
        const name = ["owner", "page", "direction", "labels", "include_archived", "filter", "fields", "query"][(t + p) % 8];
        properties[name] = property(t + p, object);
      }
      tools.push(
        new DynamicStructuredTool({
          name: `${server}_${slug}_${t}`.slice(0, 64),
          description: template.replaceAll("{o}", object),
          schema: { type: "object", properties, required: Object.keys(properties).slice(0, 1 + (t % 2)) },
          func: async () => "ok",
        }),
      );
    }
  }
  return tools;
}

const TOOLS = buildTools();
if (TOOLS.length !== 200) throw new Error(`expected 200 tools, built ${TOOLS.length}`);

/** Contributes the 200 tools the way @antler/plugin-mcp does: source "mcp", at the MCP stage. */
const fakeMcp = definePlugin({
  name: "bench-mcp",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.hooks.assembleTools.tap(async (entries) => [...entries, ...TOOLS.map((tool) => ({ tool, plugin: "bench-mcp", source: "mcp" }))], {
      stage: "normal",
    });
  },
});

/** A scripted model that also keeps the tool objects bound for each call (the scripted model keeps only names). */
class CapturingModel extends ScriptedChatModel {
  bound = [];
  async _generate(messages, options) {
    this.bound.push(options.tools ?? []);
    return super._generate(messages, options);
  }
  async *_streamResponseChunks(messages, options, runManager) {
    this.bound.push(options.tools ?? []);
    yield* super._streamResponseChunks(messages, options, runManager);
  }
}

/** One real turn; for each model call, the system message and the bound tools as OpenAI function tools. */
async function promptsOf(enabled, steps) {
  const root = mkdtempSync(join(tmpdir(), "antler-tokens-bench-"));
  const model = new CapturingModel(steps);
  const capture = definePlugin({
    name: "bench-capture-model",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.models.addProvider({ id: "capture", create: () => model });
    },
  });
  const client = await AntlerClient.create({
    config: {
      models: [{ name: "m", provider: "capture" }],
      storage: { backend: "memory" },
      title: { enabled: false },
      logging: { level: "warn" },
      tool_search: { enabled, auto_promote_top_k: 0 },
    },
    plugins: [capture, fakeMcp, toolSearchPlugin],
    cwd: root,
    env: {},
    discover: false,
  });
  try {
    await client.chat("Summarize the open issues assigned to me.", { threadId: "bench" });
    return model.calls.map((call, i) => ({
      system: SystemMessage.isInstance(call.messages[0]) ? call.messages[0].text : "",
      bound: model.bound[i].map((tool) => convertToOpenAITool(tool)),
    }));
  } finally {
    await client.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const encoders = { o200k_base: new Tiktoken(o200k), cl100k_base: new Tiktoken(cl100k) };
const count = (enc, text) => enc.encode(text).length;

const [bound] = await promptsOf(false, [{ text: "ok" }]);
// The deferred turn loads 5 tools with tool_search; its second model call has them bound.
const select = `select:${TOOLS.filter((t) => t.name.startsWith("github_"))
  .slice(0, 5)
  .map((t) => t.name)
  .join(",")}`;
const [deferred, loaded] = await promptsOf(true, [{ toolCalls: [{ name: "tool_search", args: { query: select } }] }, { text: "ok" }]);
if (loaded.bound.length !== deferred.bound.length + 5)
  throw new Error(`expected 5 more bound tools after tool_search, got ${loaded.bound.length}`);

const rows = [];
for (const [name, enc] of Object.entries(encoders)) {
  const measure = (p) => {
    const system = count(enc, p.system);
    const tools = count(enc, JSON.stringify(p.bound));
    return { system, tools, total: system + tools, n: p.bound.length };
  };
  const b = measure(bound);
  const d = measure(deferred);
  const d5 = measure(loaded);
  rows.push([name, "bound (tool_search off)", b]);
  rows.push([name, "deferred (tool_search on)", d, b]);
  rows.push([name, "deferred, after tool_search loaded 5", d5, b]);
}

console.log("\nPrompt tokens per model call, 200 MCP tools (system prompt + bound tool schemas as OpenAI function tools)\n");
console.log("| tokenizer | mode | bound tools | system prompt | tool schemas | total | vs bound |");
console.log("|---|---|---|---|---|---|---|");
for (const [enc, mode, r, base] of rows) {
  const ratio = base ? `${(r.total / base.total).toFixed(3)}× (−${(100 - (100 * r.total) / base.total).toFixed(1)}%)` : "1×";
  console.log(
    `| ${enc} | ${mode} | ${r.n} | ${r.system.toLocaleString("en")} | ${r.tools.toLocaleString("en")} | ${r.total.toLocaleString("en")} | ${ratio} |`,
  );
}
