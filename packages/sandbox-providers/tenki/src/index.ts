export {
  authHeaders,
  type CallOptions,
  CONTROL_SERVICE,
  DATA_SERVICE,
  SESSION_CERT_HEADER,
  TenkiApi,
  type TenkiApiOptions,
  TenkiCallError,
} from "./api.js";
export { TENKI_KEY_ENVS, type TenkiConfig, type TenkiConfigInput, tenkiConfigSchema } from "./config.js";
export { default, TENKI_PROVIDER_ID, TENKI_SERVICE, type TenkiProviderOptions, TenkiSandboxProvider } from "./plugin.js";
export { createTenkiRemote, TENKI_SESSION_TAG, type TenkiCreateSettings, type TenkiSession } from "./remote.js";
