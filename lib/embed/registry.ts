import {
  type EmbeddingSettings,
  embeddingSettings,
  type ModelChoice,
  parseModelChoice,
} from "./config";
import { FailoverEmbedder, type FailoverOptions } from "./failover";
import { HttpEmbedder } from "./http";
import { LexicalEmbedder } from "./lexical";
import { OnnxEmbedder } from "./onnx";
import { ShippedEmbedder } from "./shipped";
import { type CallLedger, type Embedder, EmbeddingError } from "./types";

/**
 * Builds the configured embedder: the model of WIREWATCH_EMBEDDING_MODEL (or the one named), and
 * for an http model its fallback (WIREWATCH_EMBEDDING_FALLBACK, the shipped model by default)
 * behind a FailoverEmbedder. A model that cannot be built (a package or directory missing, an
 * http model without its URL) is an EmbeddingError("unavailable") here, before any call.
 */
export interface BuildOptions {
  /** Where http calls are recorded (the cost ledger). */
  ledger?: CallLedger;
  onFailover?: FailoverOptions["onFailover"];
}

export function createEmbedder(
  settings: EmbeddingSettings,
  choice: ModelChoice = settings.model,
  options: BuildOptions = {},
): Embedder {
  switch (choice.provider) {
    case "shipped":
      return new ShippedEmbedder();
    case "lexical":
      return new LexicalEmbedder();
    case "onnx":
      return new OnnxEmbedder({ directory: choice.directory });
    case "http":
      return withFallback(httpEmbedder(settings, choice, options), settings, options);
  }
}

/** The configured model, or the one `model` names ("shipped", "http:<name>", a printed id…). */
export function configuredEmbedder(options: BuildOptions & { model?: string } = {}): Embedder {
  const settings = embeddingSettings();
  const choice = options.model === undefined ? settings.model : parseModelChoice(options.model);
  return createEmbedder(settings, choice, options);
}

function httpEmbedder(
  settings: EmbeddingSettings,
  choice: Extract<ModelChoice, { provider: "http" }>,
  options: BuildOptions,
): HttpEmbedder {
  if (!settings.url || !settings.dims) {
    throw new EmbeddingError(
      `the http model "${choice.name}" needs WIREWATCH_EMBEDDING_URL (the server's API base) ` +
        "and WIREWATCH_EMBEDDING_DIMS (its vectors' size)",
      "unavailable",
    );
  }
  const host = new URL(settings.url).host;
  if (choice.host !== undefined && choice.host !== host) {
    throw new EmbeddingError(
      `the model id names the server ${choice.host}, but WIREWATCH_EMBEDDING_URL is at ${host}`,
      "unavailable",
    );
  }
  return new HttpEmbedder({
    baseUrl: settings.url,
    model: choice.name,
    dims: settings.dims,
    pricePerMillionTokens: settings.pricePerMillionTokens,
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    ...(settings.requestsPerMinute ? { requestsPerMinute: settings.requestsPerMinute } : {}),
    ...(options.ledger ? { ledger: options.ledger } : {}),
  });
}

function withFallback(
  primary: Embedder,
  settings: EmbeddingSettings,
  options: BuildOptions,
): Embedder {
  if (settings.fallback === "none") return primary;
  const fallback = settings.fallback === "lexical" ? new LexicalEmbedder() : new ShippedEmbedder();
  return new FailoverEmbedder(primary, fallback, {
    ...(options.onFailover ? { onFailover: options.onFailover } : {}),
  });
}
