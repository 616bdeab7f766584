import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createScratchDatabase, type ScratchDatabase } from "@/lib/scratchDatabase";
import { sleep } from "@/lib/sleep";
import { requireRealPostgres, testServerUrl } from "@/lib/testing/db";
import { type LineProcess, spawnLineProcess } from "@/workers/line/testing/lineProcess";
import { change, createOutlets, madeUpWords, OUTLETS, put, type Written } from "./testing/items";

// The dedup stage in real processes against one PostgreSQL: one is killed with SIGKILL while
// its decisions are inside their transactions (each held open 150 ms before it commits); another
// picks up the leases the sweeper returns. Every item must end deduped once in effect.

describe.skipIf(!requireRealPostgres("the dedup stage's kill -9 test"))(
  "dedup worker processes",
  () => {
    let scratch: ScratchDatabase;
    const started: LineProcess[] = [];

    beforeAll(async () => {
      scratch = await createScratchDatabase("ww_test", testServerUrl(), { poolSize: 4 });
      await createOutlets(scratch.db);
    });
    afterEach(async () => {
      for (const p of started.splice(0)) {
        p.kill("SIGKILL");
        await p.exited;
      }
    });
    afterAll(() => scratch?.dispose());

    const db = () => scratch.db;
    const count = async (sql: string) =>
      (
        (await db().prisma.$queryRawUnsafe<{ n: number }[]>(`SELECT (${sql})::int AS n`))[0] as {
          n: number;
        }
      ).n;
    async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      while (Date.now() < end) {
        if (await check()) return;
        await sleep(50);
      }
      const logs = started.map((p) => `--- ${p.id}\n${p.stderr()}`).join("\n");
      throw new Error(`timed out waiting for ${what}\n${logs}`);
    }
    const decided = () =>
      count(
        "SELECT count(*) FROM news n JOIN dedup_items d USING (entry_key) WHERE d.version = n.version AND d.decision_ms IS NOT NULL",
      );

    it("kill -9 mid-decision: every item deduped once in effect, one cluster per story", async () => {
      // 30 stories, three copies each from different outlets (two byte-identical, one with a
      // suffix that keeps it a near copy), plus 10 items alone.
      const word = madeUpWords(7);
      const stories: Written[][] = [];
      const alone: Written[] = [];
      const spawn = async (o: { holdMs?: number }) => {
        const p = await spawnLineProcess({
          url: scratch.where,
          concurrency: 4,
          leaseSeconds: 2,
          sweepMs: 300,
          ...o,
        });
        started.push(p);
        return p;
      };
      const victim = await spawn({ holdMs: 150 });
      for (let s = 0; s < 30; s++) {
        const words = Array.from({ length: 24 }, word);
        const text = { title: words.slice(0, 8).join(" "), summary: words.slice(8).join(" ") };
        const copies: Written[] = [];
        for (let c = 0; c < 3; c++) {
          const outlet = OUTLETS[(s + c) % OUTLETS.length] as string;
          copies.push(await put(db(), outlet, `story-${s}-${c}`, text));
        }
        stories.push(copies);
      }
      for (let i = 0; i < 10; i++) {
        const words = Array.from({ length: 20 }, word);
        alone.push(
          await put(db(), "observer", `alone-${i}`, {
            title: words.slice(0, 8).join(" "),
            summary: words.slice(8).join(" "),
          }),
        );
      }
      // Edits while it runs: the last copy of the first five stories gets a new version (same
      // text plus a line), so some jobs race their own newer version.
      for (let s = 0; s < 5; s++) {
        const [row] = await db().prisma.$queryRaw<{ title: string; summary: string }[]>`
        SELECT title, summary FROM news WHERE entry_key = ${stories[s]?.[2]?.entryKey}`;
        await change(db(), OUTLETS[(s + 2) % OUTLETS.length] as string, `story-${s}-2`, {
          title: row?.title,
          summary: `${row?.summary} Updated at noon.`,
        });
      }
      const total = 30 * 3 + 10;
      await until("a third decided", async () => (await decided()) >= total / 3);
      const heldAtKill = await count(
        `SELECT count(*) FROM jobs WHERE state = 'leased' AND lease_owner = '${victim.id}'`,
      );
      victim.kill("SIGKILL");
      expect((await victim.exited).signal).toBe("SIGKILL");
      expect(heldAtKill).toBeGreaterThan(0);

      await spawn({});
      await until("every item decided at its version", async () => (await decided()) === total);
      await until("the queue empty", async () => (await count("SELECT count(*) FROM jobs")) === 0);

      // The kill did land on held work: the second worker took over leases that ran out.
      expect(
        await count(
          "SELECT coalesce(sum(reclaimed), 0) FROM queue_claim_stats WHERE queue = 'dedup'",
        ),
      ).toBeGreaterThan(0);

      // One dedup_items row per item, at its latest version.
      expect(await count("SELECT count(*) FROM dedup_items")).toBe(total);
      expect(
        await count(
          "SELECT count(*) FROM dedup_items d JOIN news n USING (entry_key) WHERE d.version <> n.version",
        ),
      ).toBe(0);
      // One live cluster per story, holding its three copies; the items alone in none.
      expect(await count("SELECT count(*) FROM dedup_clusters WHERE dissolved_at IS NULL")).toBe(
        30,
      );
      for (const copies of stories) {
        const rows = await db().prisma.$queryRaw<{ cluster_id: bigint | null; outcome: string }[]>`
        SELECT cluster_id, outcome FROM dedup_items
        WHERE entry_key = ANY(${copies.map((c) => c.entryKey)}::text[])`;
        expect(new Set(rows.map((r) => String(r.cluster_id))).size).toBe(1);
        expect(rows[0]?.cluster_id).not.toBeNull();
        expect(rows.map((r) => r.outcome).sort()).toEqual(["duplicate", "duplicate", "unique"]);
      }
      for (const a of alone) {
        const [row] = await db().prisma.$queryRaw<{ cluster_id: bigint | null; outcome: string }[]>`
        SELECT cluster_id, outcome FROM dedup_items WHERE entry_key = ${a.entryKey}`;
        expect(row).toEqual({ cluster_id: null, outcome: "unique" });
      }
      // One live link per duplicate, and the news row mirrors it.
      expect(await count("SELECT count(*) FROM dedup_links WHERE ended_at IS NULL")).toBe(60);
      expect(
        await count(`SELECT count(*) FROM dedup_items d
                   LEFT JOIN dedup_links l ON l.entry_key = d.entry_key AND l.ended_at IS NULL
                   JOIN news n ON n.entry_key = d.entry_key
                   WHERE (d.outcome = 'duplicate') <> (l.id IS NOT NULL)
                      OR n.duplicate_of IS DISTINCT FROM l.duplicate_of`),
      ).toBe(0);
      expect(
        await count(`SELECT count(*) FROM dedup_clusters c
                   WHERE c.dissolved_at IS NULL AND c.members <> (
                     SELECT count(*) FROM dedup_items d WHERE d.cluster_id = c.id)`),
      ).toBe(0);
    }, 120_000);
  },
);
