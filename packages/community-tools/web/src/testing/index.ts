export {
  type CanonicalImage,
  type CanonicalPage,
  type CanonicalSearchResult,
  runWebToolConformance,
  type WebToolConformanceOptions,
  type WebVendorFake,
} from "./conformance.js";
export { type WebToolsHarness, type WebToolsHarnessOptions, webToolsHarness } from "./harness.js";
export {
  type LoopbackHandler,
  type LoopbackReply,
  type LoopbackServer,
  type RecordedHttpRequest,
  startLoopbackServer,
  stubLookup,
} from "./server.js";
