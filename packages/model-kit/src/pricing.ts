import type { ModelPricing } from "@antler/kernel";

/** The token counts a model call reports (LangChain's `usage_metadata`), as far as pricing reads them. */
export interface PricedUsage {
  readonly input_tokens?: number | undefined;
  readonly output_tokens?: number | undefined;
  readonly input_token_details?: { readonly cache_read?: number | undefined } | undefined;
  readonly output_token_details?: { readonly reasoning?: number | undefined } | undefined;
}

/**
 * USD for one call: cached input tokens at `cached_input` (default `input`), the rest of the input at `input`;
 * reasoning tokens (counted inside the output) at `reasoning` (default `output`), the rest at `output`.
 */
export function modelCallCostUsd(pricing: ModelPricing, usage: PricedUsage): number {
  const input = usage.input_tokens ?? 0;
  const output = usage.output_tokens ?? 0;
  const cached = Math.min(input, usage.input_token_details?.cache_read ?? 0);
  const reasoning = Math.min(output, usage.output_token_details?.reasoning ?? 0);
  const perMillion =
    (input - cached) * pricing.input +
    cached * (pricing.cached_input ?? pricing.input) +
    (output - reasoning) * pricing.output +
    reasoning * (pricing.reasoning ?? pricing.output);
  return perMillion / 1_000_000;
}
