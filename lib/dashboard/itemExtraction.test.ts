import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COSTS_SEED, costKey, seedCostRows } from "@/lib/testing/costsSeed";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { ITEM_CALLS_SHOWN, itemExtraction } from "./itemExtraction";
import { getItem } from "./items";

// The item page's extraction over the seeded ledger and extractions (lib/testing/costsSeed.ts).
let db: TestDatabase;
const now = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  await seedCostRows(db, now);
});
afterAll(async () => {
  await db?.drop();
});

describe("itemExtraction", () => {
  it("shows a canonical item's own extraction with provider, model, prompt, tokens, cost and calls", async () => {
    const item = await getItem(db, costKey("w2"));
    const e = item?.extraction;
    expect(e?.canonicalKey).toBeNull();
    expect(e?.extraction).toMatchObject({
      of: "self",
      entryKey: costKey("w2"),
      title: "Story w2",
      itemVersion: 1,
      current: true,
      language: "en",
      category: "politics",
      provider: "llm",
      model: COSTS_SEED.llmModel,
      promptVersion: "extract-v1",
      extractor: COSTS_SEED.chain,
      fellOver: false,
      calls: 2,
      tokensIn: 2100,
      tokensOut: 330,
    });
    expect(e?.extraction?.costUsd).toBeCloseTo(0.0025, 10);
    // Its two calls, newest first: the correction retry that was valid, the malformed answer.
    expect(e?.ledger).toMatchObject({ calls: 2, tokensIn: 2100, tokensOut: 330 });
    expect(e?.recentCalls.map((c) => [c.outcome, c.correction])).toEqual([
      ["ok", true],
      ["malformed", false],
    ]);
    expect(e?.recentCalls[1]?.error).toBe("malformed in the seed");
  });

  it("gives a duplicate its canonical's extraction, said so, and no call of its own", async () => {
    const e = await itemExtraction(db, costKey("g1"), costKey("w1"));
    expect(e.canonicalKey).toBe(costKey("w1"));
    expect(e.extraction).toMatchObject({
      of: "canonical",
      entryKey: costKey("w1"),
      title: "Story w1",
      entities: [{ text: "Dhaka", type: "place" }],
    });
    expect(e.ledger).toEqual({ calls: 0, costUsd: 0, tokensIn: 0, tokensOut: 0 });
    expect(e.recentCalls).toEqual([]);
    // Through getItem: news.duplicate_of names the canonical.
    expect((await getItem(db, costKey("p2")))?.extraction.extraction?.entryKey).toBe(costKey("w1"));
  });

  it("says when the extraction is of an older version, and when there is none", async () => {
    // w8 is at v2, its extraction of v1.
    const w8 = await itemExtraction(db, costKey("w8"), null);
    expect(w8.extraction).toMatchObject({ itemVersion: 1, current: false });
    const old = await itemExtraction(db, costKey("wOld"), null);
    expect(old.extraction).toBeNull();
    expect(old.ledger.calls).toBe(1);
    const none = await itemExtraction(db, costKey("gone"), null);
    expect(none).toEqual({
      extraction: null,
      canonicalKey: null,
      ledger: { calls: 0, costUsd: 0, tokensIn: 0, tokensOut: 0 },
      recentCalls: [],
    });
  });

  it(`lists at most the newest ${ITEM_CALLS_SHOWN} calls, and counts them all`, async () => {
    const key = costKey("w3");
    for (let i = 0; i < ITEM_CALLS_SHOWN + 5; i++) {
      await db.prisma.$executeRaw`
        INSERT INTO provider_calls (at, purpose, provider, model, ok, cost_usd, latency_ms,
                                    outcome, entry_key, item_version, source_id)
        VALUES (${new Date(now.getTime() + 1000 * (i + 1))}, 'extract', 'llm', 'm', false,
                0.0001, 10, 'timeout', ${key}, 1, 'wire')`;
    }
    const e = await itemExtraction(db, key, null);
    expect(e.recentCalls).toHaveLength(ITEM_CALLS_SHOWN);
    expect(e.ledger.calls).toBe(2 + ITEM_CALLS_SHOWN + 5);
    // The seed's two calls are older than these (placed after `now`).
    expect(e.recentCalls.every((c) => c.outcome === "timeout")).toBe(true);
  });
});
