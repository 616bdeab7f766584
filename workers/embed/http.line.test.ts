import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FailoverEmbedder } from "@/lib/embed/failover";
import { HttpEmbedder } from "@/lib/embed/http";
import { DatabaseCallLedger } from "@/lib/embed/ledger";
import { LexicalEmbedder } from "@/lib/embed/lexical";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Simulator, startSimulator } from "@/simulator/server";
import { dedupStage } from "@/workers/dedup/stage";
import { createOutlets, put, TEXTS } from "@/workers/dedup/testing/items";
import type { Stage } from "@/workers/line/stage";
import { meaningLine } from "./line";

// The embed stage with the OpenAI-compatible provider over real HTTP (the simulator's endpoint),
// behind its fallback, the cost ledger on the database: what the line stores when the supplier
// answers, rate-limits, or answers garbage.

let sim: Simulator;
let db: TestDatabase;
beforeAll(async () => {
  [sim, db] = await Promise.all([startSimulator({ seed: 9, manual: true }), createTestDatabase()]);
  await createOutlets(db);
});
afterAll(async () => {
  await Promise.all([sim.stop(), db.drop()]);
});
beforeEach(async () => {
  sim.control.clearAll();
  await db.prisma.$executeRawUnsafe(
    `TRUNCATE news, news_events, dedup_items, dedup_clusters, dedup_cluster_events, dedup_links,
              dedup_reviews, dedup_settings, dedup_anchors, jobs, item_vectors, search_docs,
              embedding_models, provider_calls RESTART IDENTITY`,
  );
});

const ctx = () => ({ db, signal: new AbortController().signal, attempt: 1 });

function supplier(ledger: DatabaseCallLedger) {
  const http = new HttpEmbedder({
    baseUrl: `${sim.url}/v1`,
    model: "sim-embed",
    dims: 256,
    pricePerMillionTokens: 0.02,
    ledger,
    attempts: 3,
    backoff: { baseMs: 10, capMs: 40 },
  });
  return new FailoverEmbedder(http, new LexicalEmbedder());
}

async function embedOne(guid: string, text: { title: string; summary?: string }) {
  const ledger = new DatabaseCallLedger(db);
  const line = await meaningLine(db, { embedder: supplier(ledger) });
  const w = await put(db, "wire", guid, text);
  const job = { entryKey: w.entryKey, version: 1 };
  expect(await dedupStage(db).handle(job, ctx())).toBe("survived");
  const outcome = await (line.stages[0] as Stage)
    .handle(job, ctx())
    .then((v) => v)
    .catch((e: Error) => e);
  await ledger.close();
  await line.stop();
  return outcome;
}

const stored = () =>
  db.prisma.$queryRaw<{ model: string; dims: number }[]>`
    SELECT m.model, array_length(v.embedding, 1) AS dims FROM item_vectors v
    JOIN embedding_models m ON m.id = v.model_id ORDER BY m.model`;
const calls = () =>
  db.prisma.$queryRaw<
    { ok: boolean; status: number | null; cost_usd: number; input_tokens: number }[]
  >`
    SELECT ok, status, cost_usd, input_tokens FROM provider_calls ORDER BY id`;

describe("the embed stage with an HTTP supplier", () => {
  it("stores the supplier's vectors under its model, and what each call cost", async () => {
    expect(await embedOne("a", TEXTS.strike)).toBe("survived");
    expect(await stored()).toEqual([
      { model: expect.stringMatching(/^http:sim-embed@/), dims: 256 },
    ]);
    const [call] = await calls();
    expect(call).toMatchObject({ ok: true, status: 200 });
    expect(call?.input_tokens).toBeGreaterThan(10);
    expect(call?.cost_usd).toBeCloseTo(((call?.input_tokens ?? 0) * 0.02) / 1e6, 12);
  });

  it("429 persisting: backs off, falls over, and stores the fallback's vectors under the fallback's model", async () => {
    sim.control.inject("embeddings", { kind: "429", retryAfter: 0 });
    expect(await embedOne("b", TEXTS.rate)).toBe("survived");
    expect(await stored()).toEqual([{ model: "lexical:char3-hash-512@1", dims: 512 }]);
    expect((await calls()).map((c) => c.status)).toEqual([429, 429, 429]);
  });

  it("wrong dimensions or a malformed answer: the job fails, nothing is stored, the call is recorded", async () => {
    for (const [kind, text] of [
      ["wrong-dims", TEXTS.flood],
      ["malformed", TEXTS.cricket],
    ] as const) {
      sim.control.clearAll();
      sim.control.inject("embeddings", { kind });
      const outcome = await embedOne(`c-${kind}`, text);
      expect(outcome).toBeInstanceOf(Error);
      expect(String(outcome)).toMatch(/dimensions|JSON|answer/i);
      expect(await stored()).toEqual([]);
    }
    expect((await calls()).every((c) => c.ok === false)).toBe(true);
  });
});
