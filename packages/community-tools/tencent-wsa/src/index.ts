export {
  TENCENT_WSA_API_KEY_ENV,
  TENCENT_WSA_DEFAULT_BASE_URL,
  TENCENT_WSA_MAX_RESULTS,
  type TencentWsaConfig,
  type TencentWsaConfigInput,
  tencentWsaConfigSchema,
} from "./config.js";
export { mapTencentWsaResults, type TencentWsaMappingCaps, tencentErrorStatus } from "./mapping.js";
export { default, TENCENT_WSA_PLUGIN_NAME, tencentWsaToolsPlugin } from "./plugin.js";
export { createTencentWsaProvider, TENCENT_WSA_PROVIDER_NAME, type TencentWsaProviderOptions, tencentCnt } from "./provider.js";
