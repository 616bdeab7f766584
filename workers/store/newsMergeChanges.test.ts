import { readFile } from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";

// The writer's SQL functions were made cheaper (migrations 20261214000000 and 20261214010000)
// on the promise that no result changes. This holds them to it: the first migration's
// news_instruments, news_content_hash and news_merge are created again under *_before names,
// and on random rows (NULLs, unsorted and repeated instruments, stale hashes, equal and unequal
// stamps) the new functions must give exactly what those give, and news_merge_changes must say
// true exactly when the old news_merge changes the row.
const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const INIT = path.join(process.cwd(), "prisma/migrations/20261130000000_init/migration.sql");

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const sql = await readFile(INIT, "utf8");
  for (const name of ["news_instruments", "news_content_hash", "news_merge"]) {
    const body = new RegExp(`CREATE FUNCTION ${name}\\(.*?\\n\\$\\$;`, "s").exec(sql)?.[0];
    if (!body) throw new Error(`the first migration has no function ${name}`);
    await db.prisma.$executeRawUnsafe(
      body.replace(/\b(news_instruments|news_content_hash|news_merge)\(/g, "$1_before("),
    );
  }
});
afterAll(() => db?.drop());

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
// Few distinct values, so equal fields and equal stamps come up often. The instruments include
// code points whose UTF-16 order differs from their byte order.
const word = fc.constantFrom("a", "b", "Breaking");
const stamp = maybe(fc.constantFrom(0, 1, 2, 5));
const instrument = fc.constantFrom("", "A", "B", "b", "é", "\uE000", "😀", "GP");
const instruments = fc.array(maybe(instrument), { maxLength: 5 });
const sortedSet = fc
  .uniqueArray(fc.constantFrom("A", "B", "b", "é", "\uE000", "😀", "GP"), { maxLength: 4 })
  .map((xs) => xs.sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
const instant = maybe(
  fc.constantFrom(
    "2026-01-01T00:00:00Z",
    "2026-01-01T06:00:00.5+06:00",
    "1969-12-31T23:59:59.999999Z",
    "infinity",
  ),
);

const fields = (breaking: fc.Arbitrary<boolean | null>, inst: fc.Arbitrary<unknown>) =>
  fc.record({
    entry_key: fc.constant("k"),
    source_id: fc.constant("s"),
    canonical_id: fc.constant("c"),
    quality: fc.constantFrom("fallback", "authoritative"),
    title: maybe(word),
    title_stamp: stamp,
    link: maybe(word),
    link_stamp: stamp,
    summary: maybe(word),
    summary_stamp: stamp,
    category: maybe(word),
    category_stamp: stamp,
    language: maybe(fc.constantFrom("en", "bn")),
    published_at: instant,
    breaking,
    instruments: inst,
    revision: maybe(fc.constantFrom(1, 3, 1_767_225_600_000)),
    version: fc.constantFrom(1, 2),
    last_result: fc.constantFrom("inserted", "updated", "unchanged"),
    first_seen_at: fc.constant("2026-01-01T00:00:00Z"),
    first_source: fc.constant("s"),
    first_collector: fc.constant("A"),
  });

const pair = fc.record({
  // stored rows hold normalized instruments; a few do not, and a few hashes are stale or missing
  cur: fields(fc.boolean(), fc.oneof({ weight: 4, arbitrary: sortedSet }, instruments)),
  inc: fields(maybe(fc.boolean()), fc.oneof(sortedSet, instruments)),
  hash: fc.constantFrom("right", "right", "right", "stale", "missing"),
});

describe("the writer's SQL functions give the first migration's results", () => {
  it("news_instruments, news_content_hash, news_merge and news_merge_changes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(pair, { minLength: 1, maxLength: 100 }), async (pairs) => {
        const wrong = await db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
          `WITH p AS (
             SELECT d.ord, d.p->>'hash' AS hash,
                    jsonb_populate_record(NULL::news, d.p->'cur') AS cur0,
                    jsonb_populate_record(NULL::news, d.p->'inc') AS inc
             FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS d(p, ord)
           ),
           r AS (
             SELECT ord, inc, jsonb_populate_record(cur0, jsonb_build_object('content_hash',
                      CASE hash WHEN 'right' THEN news_content_hash_before(cur0)
                                WHEN 'stale' THEN 'stale' END)) AS cur
             FROM p
           )
           SELECT ord, to_jsonb(cur) AS cur, to_jsonb(inc) AS inc,
                  news_instruments((inc).instruments) AS instruments,
                  news_instruments_before((inc).instruments) AS instruments_before,
                  news_merge_changes(cur, inc) AS changes,
                  news_merge_before(cur, inc) IS DISTINCT FROM cur AS changes_before
           FROM r
           WHERE news_instruments((inc).instruments) IS DISTINCT FROM news_instruments_before((inc).instruments)
              OR news_instruments((cur).instruments) IS DISTINCT FROM news_instruments_before((cur).instruments)
              OR news_content_hash(inc) IS DISTINCT FROM news_content_hash_before(inc)
              OR news_content_hash(cur) IS DISTINCT FROM news_content_hash_before(cur)
              OR news_merge(cur, inc) IS DISTINCT FROM news_merge_before(cur, inc)
              OR news_merge_changes(cur, inc) IS DISTINCT FROM (news_merge_before(cur, inc) IS DISTINCT FROM cur)`,
          JSON.stringify(pairs),
        );
        expect(wrong).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});
