import { randomUUID } from "node:crypto";

// What memory keeps, apart from the database code (store.ts loads kysely): the service uses these before its
// store is open, and the plugin entry loads the service.

export interface MemoryProfile {
  work_context: string;
  personal_context: string;
  top_of_mind: string;
}

export interface MemoryHistory {
  recent_months: string;
  earlier_context: string;
  long_term_background: string;
}

export const EMPTY_PROFILE: MemoryProfile = Object.freeze({ work_context: "", personal_context: "", top_of_mind: "" });
export const EMPTY_HISTORY: MemoryHistory = Object.freeze({ recent_months: "", earlier_context: "", long_term_background: "" });

export function newFactId(): string {
  return `fact_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
}
