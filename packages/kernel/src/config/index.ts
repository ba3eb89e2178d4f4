// `@antler/kernel/config`: reading and validating config.yaml, and its schemas. It loads zod and YAML.

export { importConfiguredModule, resolveConfiguredModule } from "../loader.js";
export { composedConfigJsonSchema } from "./json-schema.js";
export {
  type ConfigDocument,
  discoverConfigPath,
  invalidConfig,
  parseConfigText,
  readConfigDocument,
  validateKernelConfig,
  validateSection,
} from "./load.js";
export { kernelConfigSchema, modelConfigSchema, storageSectionSchema } from "./schema.js";
