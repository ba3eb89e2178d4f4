export { BoxLiteApi, type BoxLiteApiOptions, type RequestOptions, readEvents } from "./api.js";
export { BOXLITE_API_KEY_ENV, type BoxLiteConfig, type BoxLiteConfigInput, boxliteConfigSchema } from "./config.js";
export { BOXLITE_PROVIDER_ID, BOXLITE_SERVICE, type BoxLiteProviderOptions, BoxLiteSandboxProvider, default } from "./plugin.js";
export { type BoxLiteBox, type BoxLiteCreateSettings, createBoxLiteRemote, threadBoxNamePrefix } from "./remote.js";
export { readTar, type TarEntry, tarOneFile } from "./tar.js";
