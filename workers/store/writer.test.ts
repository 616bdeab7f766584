import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { replaySeed000 } from "@/workers/replay/seed000";
import { edit, observe, retract, writeBatch } from "./index";
import { listenForNews, type NewsListener } from "./notifications";

let db: TestDatabase;
let news: NewsListener;
let item = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.source.create({ data: { id: "wire", name: "Wire", kind: "stream" } });
  news = await listenForNews(db);
});
afterAll(async () => {
  await news?.stop();
  await db?.drop();
});

/** A fresh item identity per test, so tests share the database but never a row. */
function newItem() {
  item += 1;
  return { sourceId: "wire", guid: `item-${item}` };
}

const rich = {
  title: "Port strike ends",
  link: "https://news.example/port",
  summary: "Dock workers return after a week.",
  category: "business",
  breaking: true,
  instruments: ["MAERSK-B"],
  language: "en",
  publishedAt: "2026-06-12T09:00:00Z",
};

async function row(guid: string) {
  return db.prisma.news.findFirstOrThrow({ where: { canonicalId: guid } });
}

async function events(guid: string) {
  const r = await row(guid);
  return db.prisma.newsEvent.findMany({ where: { entryKey: r.entryKey }, orderBy: { id: "asc" } });
}

describe("seed 000 replay", () => {
  it("reproduces the seed's table, and also notifies the tombstone", async () => {
    const steps = await replaySeed000(db);
    expect(steps.map((s) => s.result)).toEqual([
      "inserted",
      "upgraded",
      "unchanged",
      "unchanged",
      "updated",
      "unchanged",
      "tombstoned",
      "unchanged",
    ]);
    expect(steps.slice(0, 6).map((s) => s.version)).toEqual([1, 2, 2, 2, 3, 3]);
    expect(steps.map((s) => s.notified)).toEqual([
      true,
      true,
      false,
      false,
      true,
      false,
      true,
      false,
    ]);
    expect(steps.map((s) => s.deleted)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
    // auditRows counts the whole table, which other tests share: it must grow by one per step.
    const first = steps[0]?.auditRows ?? 0;
    expect(steps.map((s) => s.auditRows - first + 1)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe("the guarded monotonic upsert", () => {
  it("keeps first-seen fields from the first delivery and fills empty fields later", async () => {
    const id = newItem();
    const t0 = new Date("2026-06-12T09:00:00Z");
    await observe(db, {
      ...id,
      collector: "A",
      origin: "fallback",
      title: "Port strike ends",
      observedAt: t0,
    });
    const out = await observe(db, { ...id, ...rich, collector: "B", origin: "primary" });
    expect(out.result).toBe("upgraded");
    const r = await row(id.guid);
    expect(r).toMatchObject({
      quality: "authoritative",
      category: "business",
      breaking: true,
      instruments: ["MAERSK-B"],
      firstCollector: "A",
      firstSource: "wire",
      version: 2,
    });
    expect(r.firstSeenAt.toISOString()).toBe(t0.toISOString());
  });

  it("never lets a fallback observation modify a row, even an empty field", async () => {
    const id = newItem();
    await observe(db, { ...id, collector: "A", origin: "primary", title: "Quiet title" });
    const out = await observe(db, {
      ...id,
      collector: "A",
      origin: "fallback",
      title: "Other title",
      link: "https://news.example/x",
    });
    expect(out).toMatchObject({ result: "unchanged", notified: false });
    expect((await row(id.guid)).link).toBeNull();
  });

  it("between two fallback observations, the first one stays", async () => {
    const id = newItem();
    await observe(db, { ...id, collector: "A", origin: "fallback", title: "First" });
    const out = await observe(db, { ...id, collector: "B", origin: "fallback", title: "Second" });
    expect(out.result).toBe("unchanged");
    expect((await row(id.guid)).title).toBe("First");
  });

  it("never empties or thins a populated field", async () => {
    const id = newItem();
    await observe(db, { ...id, ...rich, collector: "A", origin: "primary", revision: 1 });
    const out = await observe(db, {
      ...id,
      collector: "A",
      origin: "primary",
      title: "Port strike ends",
      link: rich.link,
      breaking: false,
      instruments: [],
      revision: 2,
    });
    expect(out.result).toBe("unchanged");
    expect(await row(id.guid)).toMatchObject({
      summary: rich.summary,
      category: "business",
      breaking: true,
      instruments: ["MAERSK-B"],
      version: 1,
    });
  });

  it("moves breaking false -> true and grows instruments as additions", async () => {
    const id = newItem();
    await observe(db, { ...id, ...rich, breaking: false, collector: "A", origin: "primary" });
    const flipped = await observe(db, { ...id, ...rich, collector: "A", origin: "primary" });
    expect(flipped).toMatchObject({ result: "upgraded", version: 2, notified: true });
    const grown = await observe(db, {
      ...id,
      ...rich,
      instruments: ["AAPL"],
      collector: "A",
      origin: "primary",
    });
    expect(grown).toMatchObject({ result: "upgraded", version: 3 });
    expect((await row(id.guid)).instruments).toEqual(["AAPL", "MAERSK-B"]);
  });

  it("a duplicate is unchanged whatever the collation or the session's time zone", async () => {
    const id = newItem();
    const input = {
      ...id,
      ...rich,
      instruments: ["spx", "SPX", "Ärzte", "aapl", "AAPL", "😀", "Ａ"],
      collector: "A",
      origin: "primary",
    } as const;
    await observe(db, input);
    expect((await observe(db, input)).result).toBe("unchanged");
    const stored = await row(id.guid);
    const [again] = await db.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SET LOCAL TIME ZONE 'Asia/Dhaka'`;
      return tx.$queryRaw<{ hash: string }[]>`
        SELECT news_content_hash(n) AS hash FROM news n WHERE entry_key = ${stored.entryKey}`;
    });
    expect(again?.hash).toBe(stored.contentHash);
  });

  it("an exact duplicate is recorded but changes nothing and wakes nothing", async () => {
    const id = newItem();
    await observe(db, { ...id, ...rich, collector: "A", origin: "primary", revision: 1 });
    await news.settle();
    const dup = await observe(db, {
      ...id,
      ...rich,
      collector: "B",
      origin: "primary",
      revision: 1,
    });
    expect(dup).toMatchObject({ result: "unchanged", version: null, notified: false });
    const before = await row(id.guid);
    expect(before.lastResult).toBe("inserted");
    expect(await events(id.guid)).toHaveLength(2);
    expect(await news.settle()).toEqual([]);
  });
});

describe("edits and ordering by the source's revision", () => {
  it("an edit changes displayed fields and bumps the version", async () => {
    const id = newItem();
    await observe(db, { ...id, ...rich, collector: "A", origin: "primary", revision: 1 });
    const out = await edit(db, {
      ...id,
      ...rich,
      title: "Port strike ends after deal",
      collector: "A",
      origin: "primary",
      revision: 2,
    });
    expect(out).toMatchObject({ result: "updated", version: 2, notified: true });
    expect((await row(id.guid)).title).toBe("Port strike ends after deal");
  });

  it("a late or replayed older revision never undoes a newer one", async () => {
    const id = newItem();
    await edit(db, { ...id, ...rich, title: "v3", collector: "A", origin: "primary", revision: 3 });
    for (const revision of [1, 2, 3]) {
      const out = await edit(db, {
        ...id,
        ...rich,
        title: `v${revision}`,
        collector: "A",
        origin: "primary",
        revision,
      });
      expect(out.result).toBe("unchanged");
    }
    expect((await row(id.guid)).title).toBe("v3");
  });

  it("remembers a newer revision even when its values look the same (A, B, A)", async () => {
    // r1 "A", then r3 "A" again (edited back), then the late r2 "B": r3 is newest, so "A" stays.
    const id = newItem();
    const base = { ...id, ...rich, collector: "A", origin: "primary" } as const;
    await edit(db, { ...base, title: "A", revision: 1 });
    const before = await row(id.guid);
    const same = await edit(db, { ...base, title: "A", revision: 3 });
    expect(same).toMatchObject({ result: "unchanged", version: null, notified: false });
    const after = await row(id.guid);
    expect(after.titleStamp).toBe(5n); // revision 3 recorded…
    expect(after.updatedAt).toEqual(before.updatedAt); // …but it is not news
    const late = await edit(db, { ...base, title: "B", revision: 2 });
    expect(late.result).toBe("unchanged");
    expect((await row(id.guid)).title).toBe("A");
  });

  it("orders by updated timestamps as revisions too", async () => {
    const id = newItem();
    const base = { ...id, ...rich, collector: "A", origin: "poll" } as const;
    await edit(db, { ...base, title: "newer", revision: "2026-06-12T10:00:00Z" });
    const late = await edit(db, { ...base, title: "older", revision: "2026-06-12T09:00:00Z" });
    expect(late.result).toBe("unchanged");
    expect((await row(id.guid)).title).toBe("newer");
  });

  it("an edit for an item never seen creates it", async () => {
    const id = newItem();
    const out = await edit(db, { ...id, ...rich, collector: "A", origin: "primary", revision: 5 });
    expect(out).toMatchObject({ result: "inserted", version: 1, notified: true });
  });
});

describe("retractions", () => {
  it("sets a tombstone, keeps the row, and nothing resurrects it", async () => {
    const id = newItem();
    await observe(db, { ...id, ...rich, collector: "A", origin: "primary", revision: 1 });
    await news.settle();
    const out = await retract(db, { ...id, collector: "A", origin: "primary", revision: 2 });
    expect(out).toMatchObject({ result: "tombstoned", version: 2, notified: true });
    const heard = (await news.settle()).map((p) => JSON.parse(p));
    expect(heard).toEqual([
      { entryKey: out.entryKey, sourceId: "wire", result: "tombstoned", version: 2 },
    ]);

    const later = [
      await edit(db, {
        ...id,
        ...rich,
        title: "back?",
        collector: "A",
        origin: "primary",
        revision: 9,
      }),
      await observe(db, { ...id, ...rich, collector: "B", origin: "primary" }),
      await retract(db, { ...id, collector: "B", origin: "primary", revision: 3 }),
    ];
    expect(later.map((o) => o.result)).toEqual(["unchanged", "unchanged", "unchanged"]);
    const r = await row(id.guid);
    expect(r.deletedAt).not.toBeNull();
    expect(r.title).toBe(rich.title);
    expect(r.version).toBe(2);
  });

  it("a retraction that arrives before the item leaves a tombstone the item cannot pass", async () => {
    const id = newItem();
    expect((await retract(db, { ...id, collector: "A", origin: "primary" })).result).toBe(
      "tombstoned",
    );
    expect((await observe(db, { ...id, ...rich, collector: "A", origin: "primary" })).result).toBe(
      "unchanged",
    );
    expect((await row(id.guid)).deletedAt).not.toBeNull();
  });
});

describe("backfill", () => {
  it("creates and upgrades silently: backfill never notifies", async () => {
    const id = newItem();
    await news.settle();
    const created = await observe(db, {
      ...id,
      title: "From history",
      collector: "A",
      origin: "backfill",
    });
    const upgraded = await observe(db, { ...id, ...rich, collector: "A", origin: "backfill" });
    expect([created.result, upgraded.result]).toEqual(["inserted", "upgraded"]);
    expect([created.notified, upgraded.notified]).toEqual([false, false]);
    expect(await news.settle()).toEqual([]);
  });
});

describe("bad input is rejected, recorded, and the writer keeps going", () => {
  const cases: [string, unknown, RegExp][] = [
    ["no identifier", { sourceId: "wire", collector: "A", origin: "primary" }, /no_identifier/],
    [
      "wrong types",
      { sourceId: "wire", collector: "A", origin: "primary", guid: 42, breaking: "yes" },
      /invalid_observation: guid.*breaking/,
    ],
    [
      "a 10 MB title",
      { sourceId: "wire", collector: "A", origin: "primary", guid: "big", title: "x".repeat(10e6) },
      /invalid_observation: title Too big/,
    ],
    [
      "invalid UTF-8 (an unpaired surrogate)",
      { sourceId: "wire", collector: "A", origin: "primary", guid: "s", title: "bad \uD800 text" },
      /invalid_observation: title is not valid Unicode/,
    ],
    [
      "a NUL character",
      { sourceId: "wire", collector: "A", origin: "primary", guid: "n", title: "a\u0000b" },
      /invalid_observation: title contains a NUL/,
    ],
    [
      "an unknown source",
      { sourceId: "nowhere", collector: "A", origin: "primary", guid: "u", title: "t" },
      /unknown_source: no source with id "nowhere"/,
    ],
    [
      "an unknown origin",
      { sourceId: "wire", collector: "A", origin: "rumour", guid: "o", title: "t" },
      /invalid_observation: origin/,
    ],
    [
      "a bad date",
      { sourceId: "wire", collector: "A", origin: "primary", guid: "d", publishedAt: "soon" },
      /invalid_observation: publishedAt is not a valid date/,
    ],
    ["not an object", "hello", /invalid_observation/],
  ];

  it.each(cases)("%s", async (_name, input, reason) => {
    const before = await db.prisma.newsEvent.count({ where: { result: "rejected" } });
    const out = await observe(db, input);
    expect(out.result).toBe("rejected");
    expect(out.reason).toMatch(reason);
    const recorded = await db.prisma.newsEvent.findUniqueOrThrow({ where: { id: out.eventId } });
    expect(recorded.result).toBe("rejected");
    expect(recorded.reason).toMatch(reason);
    expect(JSON.stringify(recorded.payload).length).toBeLessThan(64 * 1024);
    expect(await db.prisma.newsEvent.count({ where: { result: "rejected" } })).toBe(before + 1);

    // …and the next good observation is written as usual.
    const id = newItem();
    expect((await observe(db, { ...id, ...rich, collector: "A", origin: "primary" })).result).toBe(
      "inserted",
    );
  });

  it("refuses retractions and edits from the fallback observer", async () => {
    const id = newItem();
    const out = await retract(db, { ...id, collector: "A", origin: "fallback" });
    expect(out.result).toBe("rejected");
    expect(out.reason).toMatch(/not_allowed/);
  });
});

describe("writeBatch", () => {
  it("keeps each delivery's decision, order per item, and isolates bad ones", async () => {
    const a = newItem();
    const b = newItem();
    const out = await writeBatch(db, [
      { kind: "observe", input: { ...a, collector: "A", origin: "fallback", title: "thin" } },
      { kind: "observe", input: { ...b, ...rich, collector: "A", origin: "primary", revision: 1 } },
      { kind: "observe", input: { ...a, ...rich, collector: "A", origin: "primary", revision: 1 } },
      { kind: "observe", input: { sourceId: "ghost", guid: "g", collector: "A", origin: "poll" } },
      {
        kind: "edit",
        input: { ...b, ...rich, title: "b2", collector: "A", origin: "primary", revision: 2 },
      },
      { kind: "retract", input: { ...a, collector: "A", origin: "primary", revision: 2 } },
      { kind: "observe", input: { ...a, ...rich, collector: "B", origin: "primary", revision: 1 } },
      { kind: "observe", input: { sourceId: "wire", collector: "A", origin: "primary" } },
    ]);
    expect(out.map((o) => o.result)).toEqual([
      "inserted",
      "inserted",
      "upgraded",
      "rejected",
      "updated",
      "tombstoned",
      "unchanged",
      "rejected",
    ]);
    expect(out.map((o) => o.version)).toEqual([1, 1, 2, null, 2, 3, null, null]);
    expect(out[3]?.reason).toMatch(/unknown_source/);
    // one item's audit rows follow the order its deliveries were given
    const ids = [0, 2, 5, 6].map((i) => out[i]?.eventId as bigint);
    expect(ids).toEqual([...ids].sort((x, y) => (x < y ? -1 : 1)));
    expect((await row(b.guid)).title).toBe("b2");
  });
});

describe("repeat sightings (docs/decisions/011)", () => {
  const poll = (id: { sourceId: string; guid: string }, at: number, extra = {}) => ({
    ...id,
    ...rich,
    collector: "A",
    origin: "poll" as const,
    observedAt: new Date(Date.UTC(2026, 5, 12, 10, 0, at)),
    ...extra,
  });

  it("folds identical repeats from one collector and origin into the item's latest event", async () => {
    const id = newItem();
    const out = [];
    for (const at of [0, 30, 60, 90, 120]) out.push(await observe(db, poll(id, at)));
    expect(out.map((o) => o.result)).toEqual([
      "inserted",
      "unchanged",
      "unchanged",
      "unchanged",
      "unchanged",
    ]);
    expect(new Set(out.map((o) => o.eventId)).size).toBe(1);
    const [only, ...rest] = await events(id.guid);
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ result: "inserted", sightings: 5, version: 1 });
    expect(only?.observedAt.toISOString()).toBe("2026-06-12T10:00:00.000Z");
    expect(only?.lastSeenAt?.toISOString()).toBe("2026-06-12T10:02:00.000Z");
  });

  it("keeps every distinct observation: another collector, another origin, a change, a revert", async () => {
    const id = newItem();
    await observe(db, poll(id, 0));
    await observe(db, poll(id, 1, { collector: "B" }));
    await observe(db, poll(id, 2, { collector: "B" }));
    await observe(db, poll(id, 3, { origin: "primary" }));
    await observe(db, poll(id, 4, { summary: "Dock workers return after eight days." }));
    await observe(db, poll(id, 5));
    await observe(db, poll(id, 6));
    const history = await events(id.guid);
    expect(history.map((e) => [e.collector, e.origin, e.sightings])).toEqual([
      ["A", "poll", 1],
      ["B", "poll", 2],
      ["A", "primary", 1],
      ["A", "poll", 1],
      ["A", "poll", 2],
    ]);
    const [same] = await db.prisma.$queryRaw<{ same: boolean }[]>`
      SELECT (n.title, n.summary, n.version) IS NOT DISTINCT FROM (b.title, b.summary, n.version) AS same
      FROM news n CROSS JOIN LATERAL news_rebuild(n.entry_key) b WHERE n.canonical_id = ${id.guid}`;
    expect(same?.same).toBe(true);
  });

  it("folds within one batch as well, and a batch of repeats adds no row", async () => {
    const items = [newItem(), newItem(), newItem()];
    await writeBatch(
      db,
      items.flatMap((id) => [
        { kind: "observe" as const, input: poll(id, 0) },
        { kind: "observe" as const, input: poll(id, 30) },
      ]),
    );
    const before = await db.prisma.newsEvent.count();
    const again = await writeBatch(
      db,
      items.map((id) => ({ kind: "observe" as const, input: poll(id, 60) })),
    );
    expect(again.map((o) => o.result)).toEqual(["unchanged", "unchanged", "unchanged"]);
    expect(await db.prisma.newsEvent.count()).toBe(before);
    for (const id of items) expect((await events(id.guid))[0]?.sightings).toBe(3);
  });
});
