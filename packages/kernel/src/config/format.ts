/** A path into config.yaml: keys and array indexes, e.g. `["plugins", 2, "config"]`. */
export type PathSegment = string | number;

/** One problem in a config file, located as precisely as the source allows. */
export interface ConfigIssue {
  /** `plugins[2].config.max_results` */
  readonly path: string;
  readonly segments: readonly PathSegment[];
  readonly message: string;
  readonly line?: number | undefined;
  readonly column?: number | undefined;
  readonly suggestion?: string | undefined;
}

export function formatPath(segments: readonly PathSegment[]): string {
  let out = "";
  for (const seg of segments) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out || "(root)";
}

export function formatIssue(issue: ConfigIssue, file: string | null): string {
  const at = [file ?? "config", issue.line, issue.column].filter((p) => p !== undefined && p !== null).join(":");
  const hint = issue.suggestion ? ` (did you mean "${issue.suggestion}"?)` : "";
  return `${at} ${issue.path}: ${issue.message}${hint}`;
}
