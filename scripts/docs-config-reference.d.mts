// Types for the test of the config reference renderer.
export declare const REFERENCE_FILE: string;
export interface ReferenceRow {
  path: string;
  type: string;
  default: string;
  description: string;
  required: boolean;
}
export declare function typeOf(schema: unknown): string;
export declare function rowsOf(schema: unknown, prefix?: string): ReferenceRow[];
