// create-antler as a library: the same steps `npm create antler` runs, for tools that scaffold projects themselves.
export {
  CREATE_HELP,
  CREATE_USAGE,
  type CreateOptions,
  invalidPackageName,
  invokingPackageManager,
  PACKAGE_MANAGERS,
  type PackageManager,
  type ParsedCreateArgs,
  parseCreateArgs,
  suggestPackageName,
  TARBALLS_ENV,
} from "./args.js";
export { type CreateIO, main } from "./cli.js";
export { renderProject, runInstall, targetProblem, writeProject } from "./create.js";
export { findTarballs, type TarballSpecs } from "./tarballs.js";
export { AGENT_NAME, type ProjectTemplateOptions, projectFiles, START_PROMPT, TOOL_NAME } from "./template.js";
export { ANTLER_PACKAGES, type TemplateVersions, templateVersions } from "./versions.js";
