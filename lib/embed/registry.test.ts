import { describe, expect, it } from "vitest";
import { parseConfig } from "../config";
import { embeddingSettings, parseModelChoice } from "./config";
import { FailoverEmbedder } from "./failover";
import { HttpEmbedder } from "./http";
import { LEXICAL_MODEL, LexicalEmbedder } from "./lexical";
import { createEmbedder } from "./registry";
import { SHIPPED_MODEL, ShippedEmbedder } from "./shipped";

const settings = (env: Record<string, string> = {}) => embeddingSettings(parseConfig(env));
const HTTP_ENV = {
  WIREWATCH_EMBEDDING_MODEL: "http:text-embedding-3-small",
  WIREWATCH_EMBEDDING_URL: "https://api.openai.com/v1",
  WIREWATCH_EMBEDDING_DIMS: "1536",
  WIREWATCH_EMBEDDING_PRICE_PER_MTOK: "0.02",
};

describe("model ids", () => {
  it("reads the setting's short forms and the printed ids", () => {
    expect(parseModelChoice("shipped")).toEqual({ provider: "shipped" });
    expect(parseModelChoice(SHIPPED_MODEL.model)).toEqual({ provider: "shipped" });
    expect(parseModelChoice("lexical:char3-hash-512@1")).toEqual({ provider: "lexical" });
    expect(parseModelChoice("onnx:/models/multilingual-e5-small")).toEqual({
      provider: "onnx",
      directory: "/models/multilingual-e5-small",
    });
    expect(parseModelChoice("http:nomic-embed-text:v1.5")).toEqual({
      provider: "http",
      name: "nomic-embed-text:v1.5",
    });
    expect(parseModelChoice("http:text-embedding-3-small@api.openai.com")).toEqual({
      provider: "http",
      name: "text-embedding-3-small",
      host: "api.openai.com",
    });
  });

  it("refuses what names no model here", () => {
    expect(() => parseModelChoice("bert")).toThrow(/not a model: "bert"/);
    expect(() => parseModelChoice("http:")).toThrow(/not a model/);
    expect(() => parseModelChoice("shipped:use-lite@0.3.0")).toThrow(
      /the shipped model here is shipped:use-lite@0\.2\.0/,
    );
    expect(() => parseModelChoice("lexical:char4")).toThrow(/lexical:char3-hash-512@1/);
  });
});

describe("createEmbedder", () => {
  it("builds the shipped model by default, and the lexical one when asked", async () => {
    const shipped = createEmbedder(settings());
    const lexical = createEmbedder(settings({ WIREWATCH_EMBEDDING_MODEL: "lexical" }));
    try {
      expect(shipped).toBeInstanceOf(ShippedEmbedder);
      expect(shipped.info).toBe(SHIPPED_MODEL);
      expect(lexical).toBeInstanceOf(LexicalEmbedder);
      expect(lexical.info).toBe(LEXICAL_MODEL);
    } finally {
      await Promise.all([shipped.close(), lexical.close()]);
    }
  });

  it("puts an http model in front of its fallback, the shipped model by default", async () => {
    const embedder = createEmbedder(settings(HTTP_ENV));
    try {
      expect(embedder).toBeInstanceOf(FailoverEmbedder);
      const failover = embedder as FailoverEmbedder;
      expect(failover.info).toMatchObject({
        model: "http:text-embedding-3-small@api.openai.com",
        dims: 1536,
      });
      expect(failover.fallback.info).toBe(SHIPPED_MODEL);
    } finally {
      await embedder.close();
    }
    const lexical = createEmbedder(
      settings({ ...HTTP_ENV, WIREWATCH_EMBEDDING_FALLBACK: "lexical" }),
    );
    expect((lexical as FailoverEmbedder).fallback.info).toBe(LEXICAL_MODEL);
    const alone = createEmbedder(settings({ ...HTTP_ENV, WIREWATCH_EMBEDDING_FALLBACK: "none" }));
    expect(alone).toBeInstanceOf(HttpEmbedder);
  });

  it("refuses an http model without its server or with another server's id", () => {
    expect(() => createEmbedder(settings(), { provider: "http", name: "m" })).toThrow(
      /needs WIREWATCH_EMBEDDING_URL .* and WIREWATCH_EMBEDDING_DIMS/,
    );
    expect(() =>
      createEmbedder(settings(HTTP_ENV), { provider: "http", name: "m", host: "127.0.0.1:11434" }),
    ).toThrow(
      /names the server 127\.0\.0\.1:11434, but WIREWATCH_EMBEDDING_URL is at api\.openai\.com/,
    );
  });

  it("refuses an ONNX directory that is not there", () => {
    const build = () =>
      createEmbedder(settings({ WIREWATCH_EMBEDDING_MODEL: "onnx:/no/such/model" }));
    expect(build).toThrow(/no ONNX model directory at \/no\/such\/model/);
    expect(thrown(build)).toMatchObject({ name: "EmbeddingError", code: "unavailable" });
  });
});

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error("it did not throw");
}
