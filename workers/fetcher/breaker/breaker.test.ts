import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BreakerConfig } from "@/lib/breaker";
import type { Database } from "@/lib/db";
import { type EventMap, on } from "@/lib/events";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { loadSourceState } from "../sourceState";
import { createSources } from "../testing/servers";
import { admit } from "./admit";
import { disableSource } from "./disableSource";
import { recordFailure } from "./recordFailure";
import { recordSuccess } from "./recordSuccess";
import { releaseProbe } from "./releaseProbe";

const config: BreakerConfig = { threshold: 3, coolDownMs: 60_000, probeLeaseMs: 45_000 };
let db: TestDatabase;
let n = 0;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

async function freshSource(): Promise<string> {
  const id = `src-${++n}`;
  await createSources(db, [id]);
  await loadSourceState(db, id, 3_600_000);
  return id;
}

async function row(id: string) {
  return db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: id } });
}

/** Moves the breaker's clock back instead of waiting: the cool-down is over. */
async function coolDownOver(id: string) {
  await db.prisma.$executeRaw`
    UPDATE source_state SET breaker_changed_at = breaker_changed_at - interval '1 hour'
    WHERE source_id = ${id}`;
}

async function openBreaker(id: string) {
  for (let i = 0; i < config.threshold; i++)
    await recordFailure(db, id, config, { code: "http_5xx" });
}

describe("the per-source breaker in source_state", () => {
  it("opens after the threshold of consecutive failures, and admits nothing while open", async () => {
    const id = await freshSource();
    expect((await admit(db, id, config)).admitted).toBe(true);
    const r1 = await recordFailure(db, id, config, { code: "http_5xx" });
    const r2 = await recordFailure(db, id, config, { code: "http_5xx" });
    expect([r1?.opened, r2?.opened]).toEqual([false, false]);
    const r3 = await recordFailure(db, id, config, { code: "http_5xx" });
    expect(r3).toMatchObject({ state: "open", failures: 3, opened: true });
    for (let i = 0; i < 20; i++) expect((await admit(db, id, config)).admitted).toBe(false);
  });

  it("a success resets the count: failures must be consecutive", async () => {
    const id = await freshSource();
    await recordFailure(db, id, config, { code: "http_5xx" });
    await recordFailure(db, id, config, { code: "http_5xx" });
    await recordSuccess(db, id);
    expect((await recordFailure(db, id, config, { code: "http_5xx" }))?.state).toBe("closed");
    expect((await row(id)).breakerFailures).toBe(1);
  });

  it("after the cool-down exactly one of 50 callers gets the probe (serially)", async () => {
    const id = await freshSource();
    await openBreaker(id);
    await coolDownOver(id);
    const results = [];
    for (let i = 0; i < 50; i++) results.push(await admit(db, id, config));
    expect(results.filter((r) => r.admitted)).toHaveLength(1);
    expect(results.filter((r) => r.probe)).toHaveLength(1);
    const state = await row(id);
    expect(state.breakerState).toBe("half_open");
    expect(state.breakerProbeOwner).toBe(results.find((r) => r.probe)?.probeToken);
  });

  it("a successful probe closes the breaker", async () => {
    const id = await freshSource();
    await openBreaker(id);
    await coolDownOver(id);
    expect((await admit(db, id, config)).probe).toBe(true);
    expect(await recordSuccess(db, id)).toBe("closed");
    const state = await row(id);
    expect(state).toMatchObject({
      breakerFailures: 0,
      breakerProbeOwner: null,
      breakerProbeUntil: null,
    });
    expect((await admit(db, id, config)).admitted).toBe(true);
  });

  it("a failed probe reopens it with the cool-down timer reset", async () => {
    const id = await freshSource();
    await openBreaker(id);
    await coolDownOver(id);
    const probe = await admit(db, id, config);
    const result = await recordFailure(db, id, config, {
      code: "http_5xx",
      probeToken: probe.probeToken,
    });
    expect(result).toMatchObject({ state: "open", opened: true });
    const [clock] = await db.prisma.$queryRaw<{ age: number }[]>`
      SELECT extract(epoch FROM now() - breaker_changed_at)::float8 AS age
      FROM source_state WHERE source_id = ${id}`;
    expect(clock?.age).toBeLessThan(5);
    expect((await admit(db, id, config)).admitted).toBe(false);
  });

  it("a hung probe's lease expires; the late probe's verdict is fenced off", async () => {
    const id = await freshSource();
    await openBreaker(id);
    await coolDownOver(id);
    const hung = await admit(db, id, config);
    expect(hung.probe).toBe(true);
    expect((await admit(db, id, config)).admitted).toBe(false);
    await db.prisma.$executeRaw`
      UPDATE source_state SET breaker_probe_until = now() - interval '1 second' WHERE source_id = ${id}`;
    const next = await admit(db, id, config);
    expect(next.probe).toBe(true);
    expect(next.probeToken).not.toBe(hung.probeToken);
    // The hung probe finally fails: it counts, but it no longer holds the probe.
    expect(
      (await recordFailure(db, id, config, { code: "timeout", probeToken: hung.probeToken }))
        ?.state,
    ).toBe("half_open");
    expect(await releaseProbe(db, id, hung.probeToken as string)).toBe(false);
    expect((await row(id)).breakerProbeOwner).toBe(next.probeToken);
  });

  it("a released probe lets the next caller probe at once", async () => {
    const id = await freshSource();
    await openBreaker(id);
    await coolDownOver(id);
    const probe = await admit(db, id, config);
    expect(await releaseProbe(db, id, probe.probeToken as string)).toBe(true);
    expect((await admit(db, id, config)).probe).toBe(true);
  });

  it("a disabled source is never admitted, and disabling keeps the first reason", async () => {
    const id = await freshSource();
    expect(await disableSource(db, id, "http_410", "gone")).toBe(true);
    expect(await disableSource(db, id, "http_404", "later")).toBe(false);
    expect((await row(id)).disabledReason).toBe("http_410: gone");
    expect(await admit(db, id, config)).toMatchObject({ admitted: false, disabled: true });
  });
});

/** Breaker events of one source, in the order they were emitted. */
function breakerEvents(id: string) {
  const seen: [string, unknown][] = [];
  const names = ["breaker:opened", "breaker:closed", "breaker:disabled"] as const;
  const offs = names.map((name) =>
    on(name, (e: EventMap[typeof name]) => {
      if (e.source === id) seen.push([name, e]);
    }),
  );
  unsubscribe.push(...offs);
  return seen;
}
const unsubscribe: (() => void)[] = [];
afterEach(() => {
  for (const off of unsubscribe.splice(0)) off();
});

describe("breaker events: one per transition, where the transition is decided", () => {
  it("opened once at the threshold, closed once by the success after it, nothing in between", async () => {
    const id = await freshSource();
    const seen = breakerEvents(id);
    await recordSuccess(db, id); // closed already: no transition
    await recordFailure(db, id, config, { code: "http_5xx", failedRequests: 2 });
    expect(seen).toEqual([]);
    await recordFailure(db, id, config, { code: "timeout" }); // 3 of 3
    await recordFailure(db, id, config, { code: "timeout" }); // open already
    expect(seen).toEqual([
      [
        "breaker:opened",
        { source: id, code: "timeout", failures: 3, openForSeconds: 60, reopened: false },
      ],
    ]);
    await recordSuccess(db, id);
    await recordSuccess(db, id);
    expect(seen.slice(1)).toEqual([["breaker:closed", { source: id }]]);
  });

  it("a failed probe reopens (reopened: true); a probe handed back emits nothing", async () => {
    const id = await freshSource();
    await openBreaker(id);
    await coolDownOver(id);
    const seen = breakerEvents(id);
    const handedBack = await admit(db, id, config);
    await releaseProbe(db, id, handedBack.probeToken as string);
    expect(seen).toEqual([]);
    const probe = await admit(db, id, config);
    await recordFailure(db, id, config, { code: "parse_error", probeToken: probe.probeToken });
    expect(seen).toEqual([
      [
        "breaker:opened",
        { source: id, code: "parse_error", failures: 4, openForSeconds: 60, reopened: true },
      ],
    ]);
    await coolDownOver(id);
    const next = await admit(db, id, config);
    expect(next.probe).toBe(true);
    await recordSuccess(db, id);
    expect(seen.map(([name]) => name)).toEqual(["breaker:opened", "breaker:closed"]);
  });

  it("disabled once, with the code that disabled it", async () => {
    const id = await freshSource();
    const seen = breakerEvents(id);
    await disableSource(db, id, "http_410", "gone");
    await disableSource(db, id, "http_404", "later");
    expect(seen).toEqual([["breaker:disabled", { source: id, code: "http_410" }]]);
  });
});

describe.skipIf(!requireRealPostgres("50 racing admits from 5 connections"))(
  "the half-open probe across processes",
  () => {
    it("exactly one of 50 concurrent admits, over 5 connections, gets the probe", async () => {
      const others: Database[] = [];
      for (let i = 0; i < 4; i++) others.push(await db.connectAnother(10));
      const clients = [db, ...others];
      for (let round = 0; round < 5; round++) {
        const id = await freshSource();
        await openBreaker(id);
        await coolDownOver(id);
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            admit(clients[i % clients.length] as Database, id, config),
          ),
        );
        expect(results.filter((r) => r.probe)).toHaveLength(1);
        expect(results.filter((r) => r.admitted)).toHaveLength(1);
      }
    });

    it("concurrent failures count once each and open the breaker once", async () => {
      const other = await db.connectAnother(10);
      const id = await freshSource();
      const seen = breakerEvents(id);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          recordFailure(i % 2 ? db : other, id, config, { code: "reset" }),
        ),
      );
      expect(results.filter((r) => r?.opened)).toHaveLength(1);
      expect(seen.map(([name]) => name)).toEqual(["breaker:opened"]);
      expect((await row(id)).breakerFailures).toBe(20);
    });
  },
);
