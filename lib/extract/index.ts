export {
  type BudgetOptions,
  chainId,
  createExtractor,
  dailySpend,
  type ExtractorOptions,
} from "./chain";
export {
  type ConfiguredExtractorOptions,
  configuredExtractor,
  configuredProviderNames,
} from "./configured";
export { inputProblem, MAX_RAW_BYTES, MAX_SUMMARY_CHARS_IN, MAX_TITLE_CHARS } from "./input";
export { decideLanguage, detectItemLanguage, scriptMajority } from "./language";
export {
  BUILT_IN_PRICES,
  costOf,
  type Price,
  type PriceTable,
  priceOf,
  priceTable,
} from "./prices";
export { LOCAL_MODEL, LOCAL_PROMPT_VERSION, LocalProvider } from "./providers/local";
export {
  type OpenAICompatibleOptions,
  OpenAICompatibleProvider,
  PROMPT_VERSION,
  SYSTEM_PROMPT,
} from "./providers/openaiCompatible";
export {
  extractionJsonSchema,
  extractionSchema,
  MAX_ENTITIES,
  MAX_SUMMARY_CHARS,
  type ValidationResult,
  validateExtraction,
} from "./schema";
export * from "./types";
