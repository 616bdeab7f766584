import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "@/lib/config";

describe("WIREWATCH_WEBSUB_CALLBACK_URL", () => {
  it("is off unless set; takes an http(s) base, with a path", () => {
    expect(parseConfig({}).WIREWATCH_WEBSUB_CALLBACK_URL).toBeUndefined();
    expect(parseConfig({}).WIREWATCH_WEBSUB_LEASE_SECONDS).toBe(7 * 86_400);
    for (const url of ["https://news.example.com", "http://10.0.0.5:3000/wirewatch/"]) {
      expect(
        parseConfig({ WIREWATCH_WEBSUB_CALLBACK_URL: url }).WIREWATCH_WEBSUB_CALLBACK_URL,
      ).toBe(url);
    }
  });

  it("refuses what cannot carry a callback path, naming the setting", () => {
    for (const url of [
      "news.example.com",
      "ftp://news.example.com",
      "https://user:pw@news.example.com",
      "https://news.example.com/?a=1",
      "https://news.example.com/#x",
    ]) {
      expect(() => parseConfig({ WIREWATCH_WEBSUB_CALLBACK_URL: url })).toThrow(ConfigError);
      expect(() => parseConfig({ WIREWATCH_WEBSUB_CALLBACK_URL: url })).toThrow(
        /WIREWATCH_WEBSUB_CALLBACK_URL: must be the app's address as hubs reach it/,
      );
    }
    expect(() => parseConfig({ WIREWATCH_WEBSUB_LEASE_SECONDS: "10" })).toThrow(
      /WIREWATCH_WEBSUB_LEASE_SECONDS/,
    );
  });
});
