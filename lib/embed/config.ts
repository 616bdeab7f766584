import { type Config, config } from "../config";
import { LEXICAL_MODEL } from "./lexical";
import { SHIPPED_MODEL } from "./shipped";
import { EmbeddingError } from "./types";

/**
 * The embedding settings (lib/config.ts, WIREWATCH_EMBEDDING_*) as the registry uses them, and
 * the model ids a caller may name: the short forms of the setting ("shipped", "lexical",
 * "onnx:<directory>", "http:<model name>") and the ids printed with every vector
 * ("shipped:use-lite@0.2.0", "lexical:char3-hash-512@1", "http:<name>@<host>").
 */
export type ModelChoice =
  | { provider: "shipped" }
  | { provider: "lexical" }
  | { provider: "onnx"; directory: string }
  | { provider: "http"; name: string; host?: string };

export interface EmbeddingSettings {
  model: ModelChoice;
  url?: string;
  apiKey?: string;
  dims?: number;
  pricePerMillionTokens: number;
  fallback: "shipped" | "lexical" | "none";
  requestsPerMinute?: number;
}

const FORMS =
  '"shipped", "lexical", "onnx:<directory>", "http:<model name>" or a printed id such as ' +
  `"${SHIPPED_MODEL.model}"`;

export function parseModelChoice(id: string): ModelChoice {
  const trimmed = id.trim();
  const colon = trimmed.indexOf(":");
  const provider = colon < 0 ? trimmed : trimmed.slice(0, colon);
  const rest = colon < 0 ? "" : trimmed.slice(colon + 1);
  switch (provider) {
    case "shipped":
    case "lexical": {
      const known = provider === "shipped" ? SHIPPED_MODEL : LEXICAL_MODEL;
      if (colon >= 0 && trimmed !== known.model) {
        throw new EmbeddingError(
          `no model "${trimmed}": the ${provider} model here is ${known.model}`,
          "unavailable",
        );
      }
      return { provider };
    }
    case "onnx":
      if (!rest) break;
      return { provider: "onnx", directory: rest };
    case "http": {
      if (!rest) break;
      // "http:<name>@<host>" as printed; a name may hold ":" (Ollama's "nomic-embed-text:v1.5").
      const at = rest.lastIndexOf("@");
      return at > 0
        ? { provider: "http", name: rest.slice(0, at), host: rest.slice(at + 1) }
        : { provider: "http", name: rest };
    }
  }
  throw new EmbeddingError(`not a model: "${id}"; name one of ${FORMS}`, "unavailable");
}

export function embeddingSettings(c: Config = config()): EmbeddingSettings {
  return {
    model: parseModelChoice(c.WIREWATCH_EMBEDDING_MODEL),
    ...(c.WIREWATCH_EMBEDDING_URL ? { url: c.WIREWATCH_EMBEDDING_URL } : {}),
    ...(c.WIREWATCH_EMBEDDING_API_KEY ? { apiKey: c.WIREWATCH_EMBEDDING_API_KEY } : {}),
    ...(c.WIREWATCH_EMBEDDING_DIMS ? { dims: c.WIREWATCH_EMBEDDING_DIMS } : {}),
    pricePerMillionTokens: c.WIREWATCH_EMBEDDING_PRICE_PER_MTOK,
    fallback: c.WIREWATCH_EMBEDDING_FALLBACK,
    ...(c.WIREWATCH_EMBEDDING_RPM ? { requestsPerMinute: c.WIREWATCH_EMBEDDING_RPM } : {}),
  };
}
