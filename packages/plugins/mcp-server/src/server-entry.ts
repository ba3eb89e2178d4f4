export { ARTIFACT_URI_TEMPLATE, artifactUri, parseArtifactUri, RESOURCE_NOT_FOUND } from "./artifacts.js";
export { checkExposedTools, describeExposedTool, ExposedToolRunner, exposedToolsFor } from "./exposed-tools.js";
export { McpHttpSessions } from "./http.js";
export { type AntlerMcpServerOptions, createAntlerMcpServer, TRACE_META_KEY } from "./server.js";
