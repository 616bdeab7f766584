export { CallBreaker } from "./breaker";
export { checkTexts, MAX_TEXT_CHARS, MAX_TEXTS_PER_CALL } from "./checks";
export {
  type EmbeddingSettings,
  embeddingSettings,
  type ModelChoice,
  parseModelChoice,
} from "./config";
export { FailoverEmbedder, type FailoverOptions } from "./failover";
export {
  estimateTokens,
  HttpEmbedder,
  type HttpEmbedderOptions,
  httpModelInfo,
  parseRetryAfter,
} from "./http";
export { DatabaseCallLedger, type DatabaseLedgerOptions, MemoryCallLedger } from "./ledger";
export {
  LEXICAL_DIMS,
  LEXICAL_MODEL,
  LexicalEmbedder,
  lexicalForm,
  lexicalVector,
} from "./lexical";
export { ONNX_INSTALL_HINT, OnnxEmbedder, type OnnxOptions, readOnnxDirectory } from "./onnx";
export { type BuildOptions, configuredEmbedder, createEmbedder } from "./registry";
export { SHIPPED_MODEL, SHIPPED_VERSION, ShippedEmbedder } from "./shipped";
export * from "./types";
export { cosine, toUnitLength } from "./vector";
