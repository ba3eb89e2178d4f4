export { createWebCaptureTool, WEB_CAPTURE_TOOL_NAME, type WebCaptureToolOptions } from "./capture-tool.js";
export { type BrowserCheckResult, browserCheckCommand, checkBrowser } from "./check.js";
export {
  type BrowserConfig,
  type BrowserConfigInput,
  browserConfigSchema,
  DEFAULT_BROWSERLESS_TOKEN_ENV,
  DEFAULT_EXECUTABLE_PATH,
  type RemoteBrowserConfig,
  remoteBrowserSchema,
} from "./config.js";
export { BrowserError, type BrowserErrorCode, BrowserErrorCodes, isBrowserError } from "./errors.js";
export { ELEMENT_REF_PATTERN, type ElementRef, FrameRefs, type ParsedRef, parseElementRef } from "./frame-refs.js";
export { type BlockedRequest, type CheckUrl, installRequestGuard, type RequestGuardOptions } from "./guard.js";
export {
  assertBrowserStartable,
  BASE_CHROMIUM_ARGS,
  checkChromiumExecutable,
  chromiumArgs,
  connectOverCdp,
  isRoot,
  type LaunchOptions,
  launchChromium,
  loadPlaywright,
} from "./launch.js";
export { browserLiveRoutes, type LiveInput, type LiveViewConfig, LiveViewErrorCodes } from "./live.js";
export { WEB_CAPTURE_TOOL_GROUP } from "./names.js";
export {
  BROWSER_PLUGIN_NAME,
  BROWSER_SESSIONS,
  BROWSER_TOOL_GROUP,
  type BrowserPluginOptions,
  createBrowserPlugin,
  default,
} from "./plugin.js";
export { browserlessUrl, connectBrowserless, type Env, redact, remoteToken } from "./remote.js";
export {
  BrowserSession,
  MAX_FRAME_DEPTH,
  MAX_SNAPSHOT_FRAMES,
  MAX_SNAPSHOT_REFS,
  type PageCapture,
  type SessionOptions,
  type SessionScope,
} from "./session.js";
export { type BrowserManagerOptions, BrowserSessionManager, type SessionInfo, UNGUARDED_CDP_WARNING } from "./session-manager.js";
export {
  FRAME_SLOT_ATTRIBUTE,
  type FrameSlot,
  type FrameSnapshot,
  formatSnapshot,
  type PageSnapshot,
  REF_ATTRIBUTE,
  type SnapshotArgs,
  snapshotExpression,
} from "./snapshot.js";
export { BROWSER_TOOL_NAMES, type BrowserToolOptions, browserScopeOf, createBrowserTools } from "./tools.js";
