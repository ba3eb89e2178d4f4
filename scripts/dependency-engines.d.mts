// Types for the test of the dependency engines check.
export declare const NEWEST_TESTED_NODE_MAJOR: number;
export declare function allowsAllOf(theirs: string, ours: string): boolean;
export declare function engineConflicts(
  packages: { name: string; dir: string; manifest: Record<string, unknown> }[],
): { dependency: string; engines: string; via: string }[];
