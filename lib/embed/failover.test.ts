import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "@/simulator/server";
import { FailoverEmbedder } from "./failover";
import { HttpEmbedder } from "./http";
import { LEXICAL_MODEL, LexicalEmbedder } from "./lexical";

// A real HTTP primary (the simulator's endpoint, with its faults) and the lexical fallback.

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ manual: true, embeddings: { apiKey: "sk-ok" } });
});
afterAll(() => sim.stop());
afterEach(() => sim.control.clearAll());

const primary = (overrides: { apiKey?: string; baseUrl?: string } = {}) =>
  new HttpEmbedder({
    baseUrl: `${sim.url}/v1`,
    model: "sim",
    dims: 256,
    apiKey: "sk-ok",
    attempts: 2,
    backoff: { baseMs: 5, capMs: 10 },
    ...overrides,
  });

describe("FailoverEmbedder", () => {
  it("answers with the primary's model while it is healthy", async () => {
    const embed = new FailoverEmbedder(primary(), new LexicalEmbedder());
    const batch = await embed.embed(["a", "b"]);
    expect(batch.model.provider).toBe("http");
    expect(batch.vectors.every((v) => v.length === 256)).toBe(true);
  });

  it("answers the whole batch from the fallback when the primary is down: one model a batch", async () => {
    sim.control.inject("embeddings", { kind: "503" });
    const seen: string[] = [];
    const embed = new FailoverEmbedder(primary(), new LexicalEmbedder(), {
      onFailover: (err) => seen.push(err.code),
    });
    const batch = await embed.embed(["a", "b", "c"]);
    expect(batch.model).toBe(LEXICAL_MODEL);
    expect(batch.vectors.every((v) => v.length === LEXICAL_MODEL.dims)).toBe(true);
    expect(seen).toEqual(["provider_error"]);
  });

  it("does not hide a misconfiguration or a refused answer behind the fallback", async () => {
    const wrongKey = new FailoverEmbedder(primary({ apiKey: "sk-bad" }), new LexicalEmbedder());
    await expect(wrongKey.embed(["a"])).rejects.toMatchObject({ code: "unavailable" });
    sim.control.inject("embeddings", { kind: "wrong-dims" });
    const embed = new FailoverEmbedder(primary(), new LexicalEmbedder());
    await expect(embed.embed(["a"])).rejects.toMatchObject({ code: "invalid_answer" });
    await expect(embed.embed([""])).rejects.toMatchObject({ code: "bad_input" });
  });

  it("says both failed when the fallback fails too", async () => {
    sim.control.inject("embeddings", { kind: "500" });
    const deadFallback = primary({ baseUrl: "http://127.0.0.1:9/v1" });
    const embed = new FailoverEmbedder(primary(), deadFallback);
    await expect(embed.embed(["a"])).rejects.toMatchObject({
      code: "provider_error",
      message: expect.stringMatching(
        /HTTP 500.*; the fallback http:sim@127\.0\.0\.1:9 failed too: .*no answer/,
      ),
    });
  });
});
