import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SOURCE_AUDIT_ACTIONS } from "@/lib/dashboard/sources";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { syncSources } from "@/workers/sources/syncSources";
import { applyImport, existingSources } from "./apply";
import { exportSources } from "./export";
import { parseOpml } from "./parse";
import { planImport } from "./plan";

const fixture = (name: string) =>
  readFileSync(path.join(import.meta.dirname, "testdata", name), "utf8");

let db: TestDatabase;
let other: TestDatabase;

const fileSources = [
  {
    id: "verge",
    name: "The Verge (from the file)",
    kind: "feed" as const,
    url: "https://www.theverge.com/rss/index.xml",
    allowPrivate: false,
    enabled: true,
    pollIntervalSeconds: 60,
    collectors: ["A", "B"],
  },
  {
    id: "wire",
    name: "Wire",
    kind: "stream" as const,
    url: "https://wire.example.com/events",
    allowPrivate: false,
    enabled: true,
    pollIntervalSeconds: 300,
    collectors: ["A"],
  },
];

beforeAll(async () => {
  [db, other] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  await syncSources(db, fileSources);
});
afterAll(async () => {
  await Promise.all([db?.drop(), other?.drop()]);
});

async function importText(target: TestDatabase, text: string, actor = "test") {
  const plan = planImport(parseOpml(text), await existingSources(target));
  return { plan, result: await applyImport(target, plan, { actor, file: "subs.opml" }) };
}

describe("applyImport", () => {
  it("adds the planned feeds as enabled dashboard sources, audited, leaving file sources alone", async () => {
    const before = await db.prisma.source.findUniqueOrThrow({ where: { id: "verge" } });
    const { plan, result } = await importText(db, fixture("feedly.opml"));
    // The Verge is already a file source (line 10) and twice in the file (line 14).
    expect(plan.problems.map((p) => [p.line, p.code])).toEqual([
      [10, "already_a_source"],
      [14, "duplicate_in_file"],
    ]);
    expect(result.added.map((s) => s.line)).toEqual([9, 13, 17]);
    expect(result.addedMeanwhile).toEqual([]);

    const rows = await db.prisma.source.findMany({
      where: { id: { in: result.added.map((s) => s.id) } },
      include: { state: true },
      orderBy: { name: "asc" },
    });
    expect(
      rows.map((r) => ({
        name: r.name,
        kind: r.kind,
        url: r.url,
        origin: r.configOrigin,
        enabled: r.enabled,
        poll: r.pollIntervalSeconds,
        collectors: r.collectors,
        allowPrivate: r.allowPrivate,
        hasState: r.state !== null,
      })),
    ).toEqual([
      {
        name: "Ars Technica - All content",
        kind: "feed",
        url: "https://feeds.arstechnica.com/arstechnica/index",
        origin: "dashboard",
        enabled: true,
        poll: 300,
        collectors: ["A"],
        allowPrivate: false,
        hasState: true,
      },
      expect.objectContaining({
        name: "Reuters: Top News & Analysis",
        url: "https://news.example-wire.com/rss?section=top&format=xml",
      }),
      expect.objectContaining({ name: "প্রথম আলো", url: "https://www.prothomalo.com/feed/" }),
    ]);
    // The file's source is exactly as the file made it.
    expect(await db.prisma.source.findUniqueOrThrow({ where: { id: "verge" } })).toEqual(before);

    const audit = await db.prisma.adminAudit.findFirstOrThrow({
      where: { id: BigInt(result.auditId as string) },
    });
    expect(audit).toMatchObject({
      actor: "test",
      action: SOURCE_AUDIT_ACTIONS.importOpml,
      target: { file: "subs.opml" },
      dryRun: false,
      affected: 3,
      detail: {
        added: result.added.map((s) => s.id).sort(),
        planned: 3,
        skipped: 2,
        errors: 0,
        opml: "Subscriptions in feedly Cloud",
      },
    });
  });

  it("importing the same file again adds nothing and writes nothing", async () => {
    const audits = await db.prisma.adminAudit.count();
    const { plan, result } = await importText(db, fixture("feedly.opml"));
    expect(plan.add).toEqual([]);
    expect(plan.errors).toBe(0);
    expect(plan.problems.map((p) => p.code)).toEqual([
      "already_a_source",
      "already_a_source",
      "already_a_source",
      "duplicate_in_file",
      "already_a_source",
    ]);
    expect(result).toEqual({ added: [], addedMeanwhile: [], auditId: null });
    expect(await db.prisma.adminAudit.count()).toBe(audits);
  });

  it("a source added between the plan and the write is skipped, not overwritten", async () => {
    const plan = planImport(parseOpml(fixture("inoreader.opml")), await existingSources(db));
    const [first, second] = plan.add;
    if (!first || !second) throw new Error("the fixture plans at least two feeds");
    // Someone adds the first feed under the same id, and the second one's URL under another id.
    await db.prisma.source.create({
      data: { id: first.id, name: "taken", kind: "feed", url: "https://taken.example/" },
    });
    await db.prisma.source.create({
      data: { id: "someone-else", name: "same URL", kind: "feed", url: second.url },
    });
    const result = await applyImport(db, plan, { actor: "test" });
    expect(result.addedMeanwhile.map((p) => [p.line, p.code])).toEqual([
      [first.line, "already_a_source"],
      [second.line, "already_a_source"],
    ]);
    expect(result.added).toHaveLength(plan.add.length - 2);
    expect(await db.prisma.source.findUniqueOrThrow({ where: { id: first.id } })).toMatchObject({
      name: "taken",
      url: "https://taken.example/",
    });
  });

  it("a sources-file sync leaves imported sources alone", async () => {
    const imported = await db.prisma.source.count({ where: { configOrigin: "dashboard" } });
    await syncSources(db, fileSources.slice(0, 1));
    expect(
      await db.prisma.source.count({ where: { configOrigin: "dashboard", enabled: true } }),
    ).toBe(imported);
  });

  it("round-trips through the database: import(export(x)) gives the same feeds", async () => {
    await db.prisma.source.create({
      data: {
        id: "bn-amp",
        name: "বিবিসি বাংলা & সর্বশেষ",
        kind: "feed",
        url: "https://feeds.bbci.co.uk/bengali/rss.xml?edition=bn&kind=latest",
        configOrigin: "dashboard",
      },
    });
    const { opml, count } = await exportSources(db);
    const feeds = await db.prisma.source.findMany({
      where: { kind: "feed" },
      select: { name: true, url: true },
    });
    expect(count).toBe(feeds.length);
    expect(opml).toContain(
      'xmlUrl="https://feeds.bbci.co.uk/bengali/rss.xml?edition=bn&amp;kind=latest"',
    );
    expect(opml).not.toContain("wire.example.com"); // a stream is not a feed

    // Into an empty database: every feed comes back with its name and URL.
    const { plan, result } = await importText(other, opml);
    expect(plan.problems).toEqual([]);
    const back = await other.prisma.source.findMany({ select: { name: true, url: true } });
    const sorted = (xs: { name: string; url: string | null }[]) =>
      xs.map((x) => `${x.name} ${x.url}`).sort();
    expect(sorted(back)).toEqual(sorted(feeds));
    expect(result.added).toHaveLength(feeds.length);

    // Into the database it came from: every one is already a source.
    const again = planImport(parseOpml(opml), await existingSources(db));
    expect(again.add).toEqual([]);
    expect(new Set(again.problems.map((p) => p.code))).toEqual(new Set(["already_a_source"]));
  });
});

describe("folders through the database", () => {
  const readers = [
    "feedly.opml",
    "inoreader.opml",
    "miniflux.opml",
    "newsblur.opml",
    "freshrss.opml",
  ];
  const rows = (target: TestDatabase) =>
    target.prisma.source.findMany({
      select: { id: true, name: true, url: true, folder: true },
      orderBy: { id: "asc" },
    });
  const empty = async (target: TestDatabase) => {
    await target.prisma.source.deleteMany();
  };

  it.each(readers)(
    "%s: import → export → import gives the same sources in the same folders",
    async (name) => {
      await Promise.all([empty(db), empty(other)]);
      const { result } = await importText(db, fixture(name));
      const first = await rows(db);
      expect(first).toHaveLength(result.added.length);
      // Stored as the file nests them: every imported feed that sat in a folder has its path.
      expect(first.map((r) => r.folder)).toEqual(
        first.map((r) => {
          const planned = result.added.find((s) => s.id === r.id);
          return planned?.folder.length ? planned.folder.join("/") : null;
        }),
      );
      const { opml } = await exportSources(db);
      const { plan } = await importText(other, opml);
      expect(plan.problems, name).toEqual([]);
      expect(await rows(other), name).toEqual(first);
      // And back into where it came from: nothing added, nothing moved.
      const again = planImport(parseOpml(opml), await existingSources(db));
      expect(again.add).toEqual([]);
      expect(await rows(db)).toEqual(first);
    },
  );

  it("exports nested folders as nested outlines, and a folder name with a / as one outline", async () => {
    await empty(db);
    await db.prisma.source.createMany({
      data: [
        { id: "a", name: "A", kind: "feed", url: "https://a.example/rss", folder: "News/World" },
        { id: "b", name: "B", kind: "feed", url: "https://b.example/rss", folder: "News" },
        {
          id: "c",
          name: "C",
          kind: "feed",
          url: "https://c.example/rss",
          folder: "Science\\/Space",
        },
        { id: "d", name: "D", kind: "feed", url: "https://d.example/rss" },
      ],
    });
    const { opml } = await exportSources(db, { dateCreated: new Date("2026-12-21T00:00:00Z") });
    const body = opml.slice(opml.indexOf("<body>"));
    expect(body).toBe(
      [
        "<body>",
        '    <outline type="rss" text="D" title="D" xmlUrl="https://d.example/rss"/>',
        '    <outline text="News" title="News">',
        '      <outline type="rss" text="B" title="B" xmlUrl="https://b.example/rss"/>',
        '      <outline text="World" title="World">',
        '        <outline type="rss" text="A" title="A" xmlUrl="https://a.example/rss"/>',
        "      </outline>",
        "    </outline>",
        '    <outline text="Science/Space" title="Science/Space">',
        '      <outline type="rss" text="C" title="C" xmlUrl="https://c.example/rss"/>',
        "    </outline>",
        "  </body>",
        "</opml>",
        "",
      ].join("\n"),
    );
    expect(parseOpml(opml).feeds.map((f) => [f.title, f.folder])).toEqual([
      ["D", []],
      ["B", ["News"]],
      ["A", ["News", "World"]],
      ["C", ["Science/Space"]],
    ]);
  });

  it("a sources-file source is at the top unless the file names a folder, and follows the file", async () => {
    await empty(db);
    const [verge] = fileSources;
    if (!verge) throw new Error("the file has a feed");
    await syncSources(db, [verge]);
    expect((await rows(db))[0]?.folder).toBeNull();
    await syncSources(db, [{ ...verge, folder: "Tech/Gadgets" }]);
    expect((await rows(db))[0]?.folder).toBe("Tech/Gadgets");
    const { opml } = await exportSources(db);
    expect(parseOpml(opml).feeds[0]?.folder).toEqual(["Tech", "Gadgets"]);
    // The folder taken out of the file: back to the top, as the file now says.
    await syncSources(db, [verge]);
    expect((await rows(db))[0]?.folder).toBeNull();
  });
});
