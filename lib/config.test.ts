import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "./config";

describe("configuration", () => {
  it("defaults to the embedded database under ./.data", () => {
    const c = parseConfig({});
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.WIREWATCH_DATA_DIR).toBe("./.data");
  });

  it("treats an empty setting as unset", () => {
    expect(parseConfig({ DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
  });

  it("names the bad setting and what it expected", () => {
    const attempt = () => parseConfig({ DATABASE_URL: "mysql://x", DATABASE_POOL_SIZE: "lots" });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(attempt).toThrow(/DATABASE_POOL_SIZE/);
  });

  it("renders pages with the system Chromium, two at a time, unless told otherwise", () => {
    expect(parseConfig({})).toMatchObject({ WIREWATCH_BROWSER_CONTEXTS: 2 });
    expect(parseConfig({}).WIREWATCH_CHROMIUM).toBeUndefined();
    expect(
      parseConfig({ WIREWATCH_CHROMIUM: "/opt/chrome/chrome", WIREWATCH_BROWSER_CONTEXTS: "4" }),
    ).toMatchObject({ WIREWATCH_CHROMIUM: "/opt/chrome/chrome", WIREWATCH_BROWSER_CONTEXTS: 4 });
    expect(() => parseConfig({ WIREWATCH_CHROMIUM: "chromium" })).toThrow(
      /WIREWATCH_CHROMIUM: must be an absolute path/,
    );
    expect(() => parseConfig({ WIREWATCH_BROWSER_CONTEXTS: "0" })).toThrow(
      /WIREWATCH_BROWSER_CONTEXTS/,
    );
  });

  it("embeds with the shipped model by default, with the shipped fallback for http", () => {
    const c = parseConfig({});
    expect(c.WIREWATCH_EMBEDDING_MODEL).toBe("shipped");
    expect(c.WIREWATCH_EMBEDDING_FALLBACK).toBe("shipped");
    expect(c.WIREWATCH_EMBEDDING_PRICE_PER_MTOK).toBe(0);
    expect(c.WIREWATCH_EMBEDDING_URL).toBeUndefined();
    expect(c.WIREWATCH_EMBEDDING_RPM).toBeUndefined();
  });

  it("reads an http embedding model's server, size, key, price, pace and fallback", () => {
    const c = parseConfig({
      WIREWATCH_EMBEDDING_MODEL: "http:text-embedding-3-small",
      WIREWATCH_EMBEDDING_URL: "https://api.openai.com/v1",
      WIREWATCH_EMBEDDING_API_KEY: "sk-x",
      WIREWATCH_EMBEDDING_DIMS: "1536",
      WIREWATCH_EMBEDDING_PRICE_PER_MTOK: "0.02",
      WIREWATCH_EMBEDDING_RPM: "3000",
      WIREWATCH_EMBEDDING_FALLBACK: "none",
    });
    expect(c).toMatchObject({
      WIREWATCH_EMBEDDING_DIMS: 1536,
      WIREWATCH_EMBEDDING_PRICE_PER_MTOK: 0.02,
      WIREWATCH_EMBEDDING_RPM: 3000,
      WIREWATCH_EMBEDDING_FALLBACK: "none",
    });
    expect(
      parseConfig({ WIREWATCH_EMBEDDING_MODEL: "onnx:/models/e5" }).WIREWATCH_EMBEDDING_MODEL,
    ).toBe("onnx:/models/e5");
    expect(
      parseConfig({ WIREWATCH_EMBEDDING_MODEL: "lexical:char3-hash-512@1" })
        .WIREWATCH_EMBEDDING_MODEL,
    ).toBe("lexical:char3-hash-512@1");
  });

  it("names what is wrong with the embedding settings", () => {
    expect(() => parseConfig({ WIREWATCH_EMBEDDING_MODEL: "bert" })).toThrow(
      /WIREWATCH_EMBEDDING_MODEL: must be "shipped", "lexical", "onnx:<directory>" or "http:<model name>"/,
    );
    expect(() => parseConfig({ WIREWATCH_EMBEDDING_MODEL: "onnx:" })).toThrow(
      /WIREWATCH_EMBEDDING_MODEL/,
    );
    const http = () => parseConfig({ WIREWATCH_EMBEDDING_MODEL: "http:nomic-embed-text" });
    expect(http).toThrow(/WIREWATCH_EMBEDDING_URL: is required for an http model/);
    expect(http).toThrow(/WIREWATCH_EMBEDDING_DIMS: is required for an http model/);
    expect(() => parseConfig({ WIREWATCH_EMBEDDING_URL: "127.0.0.1:11434" })).toThrow(
      /WIREWATCH_EMBEDDING_URL: must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(() => parseConfig({ WIREWATCH_EMBEDDING_DIMS: "0" })).toThrow(
      /WIREWATCH_EMBEDDING_DIMS/,
    );
    expect(() => parseConfig({ WIREWATCH_EMBEDDING_PRICE_PER_MTOK: "-1" })).toThrow(
      /WIREWATCH_EMBEDDING_PRICE_PER_MTOK/,
    );
    expect(() => parseConfig({ WIREWATCH_EMBEDDING_FALLBACK: "openai" })).toThrow(
      /WIREWATCH_EMBEDDING_FALLBACK/,
    );
    expect(() => parseConfig({ WIREWATCH_EMBEDDING_RPM: "0" })).toThrow(/WIREWATCH_EMBEDDING_RPM/);
  });

  it("reads the extraction chain, its chat server and the price table", () => {
    const c = parseConfig({
      WIREWATCH_EXTRACT_PROVIDERS: "llm, local",
      WIREWATCH_EXTRACT_LLM_URL: "https://api.openai.com/v1",
      WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD: "0.05",
      WIREWATCH_LLM_PRICES: '{"my-model":{"input":1,"output":2.5}}',
    });
    expect(c.WIREWATCH_EXTRACT_PROVIDERS).toBe("llm, local");
    expect(c.WIREWATCH_EXTRACT_LLM_MODEL).toBe("gpt-4o-mini");
    expect(c.WIREWATCH_EXTRACT_LLM_TIMEOUT_MS).toBe(30_000);
    expect(c.WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD).toBe(0.05);
    expect(c.WIREWATCH_LLM_PRICES).toEqual({ "my-model": { input: 1, output: 2.5 } });
    // The simulator may serve the chat model: no URL needed unless it is off.
    expect(parseConfig({ WIREWATCH_EXTRACT_PROVIDERS: "llm" }).WIREWATCH_EXTRACT_PROVIDERS).toBe(
      "llm",
    );
  });

  it("names what is wrong with the extraction settings", () => {
    expect(() =>
      parseConfig({ WIREWATCH_EXTRACT_PROVIDERS: "llm", WIREWATCH_SIMULATOR: "off" }),
    ).toThrow(/WIREWATCH_EXTRACT_LLM_URL: is required when WIREWATCH_EXTRACT_PROVIDERS names llm/);
    expect(() => parseConfig({ WIREWATCH_EXTRACT_PROVIDERS: "gpt" })).toThrow(
      /WIREWATCH_EXTRACT_PROVIDERS: must be a comma list of "local" and "llm"/,
    );
    expect(() => parseConfig({ WIREWATCH_EXTRACT_PROVIDERS: "local,local" })).toThrow(
      /names a provider twice/,
    );
    expect(() => parseConfig({ WIREWATCH_LLM_PRICES: "{bad" })).toThrow(
      /WIREWATCH_LLM_PRICES: must be JSON like/,
    );
    expect(() => parseConfig({ WIREWATCH_LLM_PRICES: '{"m":{"input":-1,"output":0}}' })).toThrow(
      /WIREWATCH_LLM_PRICES/,
    );
    expect(() => parseConfig({ WIREWATCH_EXTRACT_LLM_URL: "api.openai.com" })).toThrow(
      /WIREWATCH_EXTRACT_LLM_URL: must be an http/,
    );
    expect(() => parseConfig({ WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD: "-1" })).toThrow(
      /WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD/,
    );
  });
});
