import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type MarkdownRenderer } from "vitepress";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = join(docsDir, "..");
const repositoryUrl = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { repository: { url: string } }).repository.url
  .replace(/^git\+/, "")
  .replace(/\.git$/, "");

/** The module names TypeDoc derives from source paths, as the package entry points readers import. */
const apiModuleNames: Record<string, string> = {
  "kernel/src": "@antler/kernel",
  "kernel/src/authoring": "@antler/kernel/authoring",
  "kernel/src/testing": "@antler/kernel/testing",
  "plugins/runtime/src": "@antler/plugin-runtime",
};

type SidebarItem = { text?: string; link?: string; items?: SidebarItem[] };

/**
 * The API reference TypeDoc writes to docs/api (gitignored; `pnpm docs:api`, part of `docs:build`): one page per
 * entry point, listed under the name it is imported by.
 */
function apiSidebar(): SidebarItem[] {
  const file = join(docsDir, "api", "typedoc-sidebar.json");
  if (!existsSync(file)) return [];
  const groups: SidebarItem[] = [];
  // Modules nest by path (kernel/src/testing inside kernel/src): list each once, flat, one page per module.
  const visit = (items: SidebarItem[], prefix: string) => {
    for (const item of items) {
      const path = prefix ? `${prefix}/${item.text}` : (item.text ?? "");
      const name = apiModuleNames[path];
      if (name && item.link) groups.push({ text: name, link: item.link });
      if (item.items) visit(item.items, path);
    }
  };
  visit(JSON.parse(readFileSync(file, "utf8")) as SidebarItem[], "");
  return groups;
}

type Token = { type: string; attrGet(name: string): string | null; attrSet(name: string, value: string): void; children: Token[] | null };

/**
 * The pages are written for GitHub first, so they link to files outside docs/ (README.md, packages/, examples/)
 * with relative paths. Those are not pages of the site: point them at the repository on GitHub instead, and leave
 * every link inside docs/ to VitePress, whose dead-link check stays on.
 */
function linkOutsideDocsToGitHub(md: MarkdownRenderer) {
  md.core.ruler.push("antler-repo-links", (state) => {
    const env = state.env as { path?: string; relativePath?: string };
    const page = env.path ?? (env.relativePath ? join(docsDir, env.relativePath) : undefined);
    if (!page) return;
    const visit = (tokens: Token[]) => {
      for (const token of tokens) {
        if (token.children) visit(token.children);
        if (token.type !== "link_open") continue;
        const href = token.attrGet("href");
        if (!href || /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("#") || href.startsWith("//")) continue;
        const [path = "", hash] = href.split("#");
        const target = resolve(dirname(page), decodeURIComponent(path));
        const fromDocs = relative(docsDir, target);
        if (!fromDocs.startsWith("..")) continue;
        const inRepo = relative(repoRoot, target).split("\\").join("/");
        const kind = /\.[a-z0-9]+$/i.test(inRepo) ? "blob" : "tree";
        token.attrSet("href", `${repositoryUrl}/${kind}/main/${inRepo}${hash ? `#${hash}` : ""}`);
      }
    };
    visit(state.tokens as Token[]);
  });
}

export default defineConfig({
  title: "Antler",
  description: "A TypeScript agent kernel with plugins",
  // The docs are plain GitHub-flavoured Markdown: no Vue interpolation in prose or code (`{{ }}` is literal text).
  markdown: {
    config: linkOutsideDocsToGitHub,
    attrs: { disable: true },
  },
  srcExclude: ["**/README.md"],
  // Every link between pages must resolve; example URLs on localhost (a gateway's address, say) are not pages.
  ignoreDeadLinks: "localhostLinks",
  cleanUrls: true,
  lastUpdated: false,
  themeConfig: {
    nav: [
      { text: "Guide", link: "/getting-started" },
      { text: "Config reference", link: "/reference/config-schema" },
      { text: "API", link: "/api/" },
      { text: "GitHub", link: repositoryUrl },
    ],
    search: { provider: "local" },
    outline: [2, 3],
    sidebar: [
      {
        text: "Getting started",
        items: [
          { text: "Overview", link: "/" },
          { text: "Getting started", link: "/getting-started" },
        ],
      },
      {
        text: "Concepts",
        items: [
          { text: "The middleware pipeline", link: "/concepts/pipeline" },
          { text: "Trace context", link: "/concepts/trace-context" },
        ],
      },
      {
        text: "Guides",
        items: [
          { text: "Create a project", link: "/guides/create-a-project" },
          { text: "Writing a plugin", link: "/guides/writing-a-plugin" },
          { text: "Plugin author's reference", link: "/guides/plugin-reference" },
          { text: "Composing a distribution", link: "/guides/compose-a-distribution" },
        ],
      },
      {
        text: "Plugins",
        collapsed: false,
        items: [
          { text: "Models", link: "/plugins/models" },
          { text: "Storage", link: "/plugins/storage" },
          { text: "Sandboxes", link: "/plugins/sandboxes" },
          { text: "MCP and ACP", link: "/plugins/mcp-acp" },
          { text: "Deferred tools", link: "/plugins/deferred-tools" },
          { text: "Subagents", link: "/plugins/subagents" },
          { text: "Batches and schedules", link: "/plugins/batches-and-schedules" },
          { text: "Web tools", link: "/plugins/web-tools" },
          { text: "HTTP gateway", link: "/plugins/gateway" },
          { text: "Front-end protocols", link: "/plugins/protocols" },
          { text: "A2A, MCP server, ACP agent", link: "/plugins/interoperability" },
          { text: "Console", link: "/plugins/console" },
          { text: "Tracing and metrics", link: "/plugins/observability" },
          { text: "Skills and memory", link: "/plugins/skills-and-memory" },
          { text: "Guardrails and approval", link: "/plugins/guardrails-and-approval" },
          { text: "Channels", link: "/plugins/channels" },
        ],
      },
      {
        text: "Reference",
        items: [
          { text: "config.yaml", link: "/reference/config" },
          { text: "config.yaml schema (generated)", link: "/reference/config-schema" },
          { text: "CLI", link: "/reference/cli" },
          { text: "Repository layout", link: "/reference/layout" },
          { text: "Redaction", link: "/reference/redaction" },
          { text: "Benchmarks", link: "/reference/benchmarks" },
          { text: "Development", link: "/development" },
          { text: "Releasing", link: "/releasing" },
        ],
      },
      { text: "API", collapsed: true, items: [{ text: "Overview", link: "/api/" }, ...apiSidebar()] },
    ],
  },
});
