// Types for the test that runs the API report in-process.
export declare const REPORT_FILE: string;
export declare function runCli(argv: string[], io?: { out?: (line: string) => void; err?: (line: string) => void }): number;
