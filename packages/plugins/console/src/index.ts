export {
  CONSOLE_SPAN_EVENT,
  type ConsoleConfig,
  type ConsoleConfigInput,
  ConsoleErrorCodes,
  consoleConfigSchema,
  PLUGIN_NAME,
} from "./config.js";
export {
  type FormMessages,
  type FormProblem,
  type FormValue,
  type FormValues,
  formReplyText,
  validateFormValues,
} from "./human-input.js";
export { CONSOLE_PAGES, default, defaultStaticDir } from "./plugin.js";
export { type ConsoleSpan, consoleSpanMiddleware, MiddlewareSpanRelay } from "./spans.js";
export { StaticSite } from "./static.js";
