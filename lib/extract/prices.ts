import type { z } from "zod";
import { config, type priceTableSchema } from "../config";
import { logger } from "../logger";

/**
 * What a chat model's tokens cost, in USD per million tokens, input and output: the built-in
 * table below, under WIREWATCH_LLM_PRICES (JSON, its entries win). A model in neither costs 0,
 * and the log says so once per model, so a bill does not arrive that the Costs page never saw.
 *
 * Built-in prices: OpenAI's list prices for standard (not batch, not cached) tokens when this
 * table was written; `sim-extract-1` is the simulator's model, priced like gpt-4o-mini so a
 * newcomer sees costs on the Costs page.
 */
export type PriceTable = z.infer<typeof priceTableSchema>;
export interface Price {
  input: number;
  output: number;
}

export const BUILT_IN_PRICES: Readonly<PriceTable> = Object.freeze({
  "gpt-4o-mini": { input: 0.15, output: 0.6 },
  "gpt-4o": { input: 2.5, output: 10 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6 },
  "gpt-4.1-nano": { input: 0.1, output: 0.4 },
  "sim-extract-1": { input: 0.15, output: 0.6 },
});

const warned = new Set<string>();

/** The price table in force: the built-in one under the configured one. */
export function priceTable(): PriceTable {
  return { ...BUILT_IN_PRICES, ...(config().WIREWATCH_LLM_PRICES ?? {}) };
}

/** The model's price, or null when no table knows it (warned once per model). */
export function priceOf(model: string, table: PriceTable = priceTable()): Price | null {
  const price = Object.hasOwn(table, model) ? table[model] : undefined;
  if (price) return price;
  if (!warned.has(model)) {
    warned.add(model);
    logger().warn(
      { model },
      `no price for the model "${model}": its calls are recorded at cost 0; add it to WIREWATCH_LLM_PRICES`,
    );
  }
  return null;
}

/** USD for one call's tokens; 0 for a model without a price. */
export function costOf(
  model: string,
  tokensIn: number,
  tokensOut: number,
  table: PriceTable = priceTable(),
): number {
  const price = priceOf(model, table);
  if (!price) return 0;
  return (Math.max(0, tokensIn) * price.input + Math.max(0, tokensOut) * price.output) / 1_000_000;
}
