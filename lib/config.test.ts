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
});
