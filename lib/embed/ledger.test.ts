import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { DatabaseCallLedger, MemoryCallLedger } from "./ledger";
import type { ProviderCallRecord } from "./types";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.prisma.providerCall.deleteMany();
});

const call = (n: number, extra: Partial<ProviderCallRecord> = {}): ProviderCallRecord => ({
  purpose: "embed",
  provider: "http",
  model: "http:m@host",
  ok: true,
  status: 200,
  items: n,
  inputTokens: n * 10,
  costUsd: n * 0.001,
  latencyMs: 12.5,
  attempt: 1,
  ...extra,
});
const rows = () => db.prisma.providerCall.findMany({ orderBy: { id: "asc" } });

describe("DatabaseCallLedger", () => {
  it("buffers records and writes them on flush, as given", async () => {
    const ledger = new DatabaseCallLedger(db, { batchSize: 100, flushIntervalMs: 60_000 });
    ledger.record(call(1));
    ledger.record(call(2, { ok: false, status: 429, error: "HTTP 429", attempt: 2 }));
    expect(await rows()).toHaveLength(0);
    await ledger.flush();
    const written = await rows();
    expect(
      written.map((r) => [r.ok, r.status, r.items, r.inputTokens, r.attempt, r.error]),
    ).toEqual([
      [true, 200, 1, 10, 1, null],
      [false, 429, 2, 20, 2, "HTTP 429"],
    ]);
    expect(written[1]?.costUsd).toBeCloseTo(0.002, 12);
    expect(written[0]?.latencyMs).toBe(12.5);
    expect(ledger.stats).toMatchObject({ recorded: 2, written: 2, dropped: 0 });
  });

  it("writes a batch by itself once batchSize records wait, and the rest after the interval", async () => {
    const ledger = new DatabaseCallLedger(db, { batchSize: 3, flushIntervalMs: 100 });
    for (let i = 1; i <= 7; i++) ledger.record(call(i));
    await expect.poll(async () => (await rows()).length, { timeout: 5_000 }).toBe(7);
    expect((await rows()).map((r) => r.items)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("never throws into the caller, and keeps what the database refused for the next flush", async () => {
    const errors: number[] = [];
    const ledger = new DatabaseCallLedger(db, {
      flushIntervalMs: 60_000,
      maxBuffered: 3,
      onError: (_err, n) => errors.push(n),
    });
    await db.prisma.$executeRawUnsafe(
      'ALTER TABLE "provider_calls" RENAME TO "provider_calls_away"',
    );
    try {
      for (let i = 1; i <= 5; i++) ledger.record(call(i));
      await expect(ledger.flush()).resolves.toBeUndefined();
      expect(ledger.stats).toMatchObject({ failedFlushes: 1, written: 0, dropped: 2 });
      expect(ledger.stats.lastError).toMatch(/provider_calls/);
      expect(errors).toEqual([3]);
    } finally {
      await db.prisma.$executeRawUnsafe(
        'ALTER TABLE "provider_calls_away" RENAME TO "provider_calls"',
      );
    }
    await ledger.flush();
    // The oldest two went past the bound; the newest three were written once it was back.
    expect((await rows()).map((r) => r.items)).toEqual([3, 4, 5]);
    expect(ledger.stats).toMatchObject({ written: 3, dropped: 2 });
  });

  it("cleans numbers a provider could get wrong instead of failing the write", async () => {
    const ledger = new DatabaseCallLedger(db);
    ledger.record(
      call(1, {
        inputTokens: Number.NaN,
        costUsd: Number.POSITIVE_INFINITY,
        latencyMs: -0,
        attempt: 0,
      }),
    );
    await ledger.close();
    expect(await rows()).toEqual([
      expect.objectContaining({ inputTokens: 0, costUsd: 0, latencyMs: 0, attempt: 1 }),
    ]);
  });
});

describe("MemoryCallLedger", () => {
  it("keeps the records and sums tokens and cost", () => {
    const ledger = new MemoryCallLedger();
    ledger.record(call(1));
    ledger.record(call(3, { ok: false, inputTokens: 0, costUsd: 0 }));
    expect(ledger.totals()).toEqual({ calls: 2, inputTokens: 10, costUsd: 0.001 });
    expect(ledger.calls[0]?.at).toBeInstanceOf(Date);
  });
});
