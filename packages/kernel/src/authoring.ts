// `@antler/kernel/authoring`: what plugin code uses to build tools and answer from middleware. A subpath of its
// own because it loads LangChain's tool and message classes, which importing the kernel itself must not.

export { type PluginAuthoringApi, pluginAuthoringApi } from "./authoring-api.js";
export * from "./authoring-core.js";
