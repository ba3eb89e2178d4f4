// `@antler/kernel/authoring`: what plugin code uses to build tools and answer from middleware. A subpath of its own
// so the kernel's main entry stays small; importing it loads no LangChain module either (see authoring-api.ts).
export * from "./authoring-api.js";
export type { ToolDefinition } from "./tools.js";
