import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { recordActivity, recordContent } from "@/workers/collectors/collectorStatus";
import { parseSourcesFile, SourcesFileError } from "./sourcesFile";
import { syncSources } from "./syncSources";

describe("wirewatch.config.json", () => {
  it("names the bad field", () => {
    const bad = JSON.stringify({
      sources: [
        { id: "ok", name: "OK", kind: "feed", url: "https://a.example/rss" },
        { id: "bad id", name: "", kind: "telegraph", url: "ftp://a.example/" },
        {
          id: "ok",
          name: "Again",
          kind: "feed",
          url: "https://b.example/rss",
          pollIntervalSeconds: 1,
        },
      ],
    });
    const attempt = () => parseSourcesFile(bad);
    expect(attempt).toThrow(SourcesFileError);
    expect(attempt).toThrow(/sources\[1\]\.id: must be letters/);
    expect(attempt).toThrow(/sources\[1\]\.kind/);
    expect(attempt).toThrow(/sources\[1\]\.url: must be an http or https URL/);
    expect(attempt).toThrow(/sources\[2\]\.pollIntervalSeconds/);
  });

  it("refuses duplicate ids", () => {
    const twice = { id: "ok", name: "OK", kind: "feed", url: "https://a.example/rss" };
    expect(() => parseSourcesFile(JSON.stringify({ sources: [twice, twice] }))).toThrow(
      /sources\[1\]\.id: duplicate id "ok"/,
    );
  });

  it("lets a page observe another source, and only that", () => {
    const wire = { id: "wire", name: "Wire", kind: "stream", url: "https://w.example/stream" };
    const page = { id: "wire-page", name: "Wire page", kind: "page", url: "https://w.example/" };
    expect(
      parseSourcesFile(JSON.stringify({ sources: [{ ...page, observes: "wire" }, wire] }))[0],
    ).toMatchObject({
      observes: "wire",
    });
    expect(() =>
      parseSourcesFile(JSON.stringify({ sources: [{ ...page, observes: "nope" }, wire] })),
    ).toThrow(/sources\[0\]\.observes: names no other source/);
    expect(() =>
      parseSourcesFile(JSON.stringify({ sources: [page, { ...wire, observes: "wire-page" }] })),
    ).toThrow(/sources\[1\]\.observes: only a page observes/);
  });

  it("refuses unknown keys and non-JSON", () => {
    expect(() => parseSourcesFile('{"sources": [], "extra": 1}')).toThrow(/Unrecognized key/);
    expect(() => parseSourcesFile("{sources:")).toThrow(/not JSON/);
  });

  it("fills defaults", () => {
    const [s] = parseSourcesFile(
      JSON.stringify({
        sources: [{ id: "a", name: "A", kind: "feed", url: "https://a.example/" }],
      }),
    );
    expect(s).toMatchObject({
      allowPrivate: false,
      enabled: true,
      pollIntervalSeconds: 300,
      collectors: ["A"],
    });
  });
});

describe("syncing sources and collector status", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db?.drop());

  it("creates, updates and disables file sources, leaving dashboard ones alone", async () => {
    await db.prisma.source.create({
      data: { id: "dash", name: "From the dashboard", kind: "feed" },
    });
    const file = (names: string[]) =>
      parseSourcesFile(
        JSON.stringify({
          sources: names.map((id) => ({
            id,
            name: id.toUpperCase(),
            kind: "feed",
            url: `https://${id}.example/rss`,
          })),
        }),
      );
    await syncSources(db, [
      ...file(["a", "b"]),
      ...parseSourcesFile(
        JSON.stringify({
          sources: [
            {
              id: "a-page",
              name: "A's page",
              kind: "page",
              url: "https://a.example/",
              observes: "a",
            },
            { id: "a", name: "A", kind: "feed", url: "https://a.example/rss" },
          ],
        }),
      ).slice(0, 1),
    ]);
    expect((await db.prisma.source.findUniqueOrThrow({ where: { id: "a-page" } })).observes).toBe(
      "a",
    );
    await syncSources(db, file(["a"]));
    const rows = await db.prisma.source.findMany({
      orderBy: { id: "asc" },
      include: { state: true },
    });
    expect(rows.map((r) => [r.id, r.enabled, r.configOrigin, r.state !== null])).toEqual([
      ["a", true, "file", true],
      ["a-page", false, "file", true],
      ["b", false, "file", true],
      ["dash", true, "dashboard", false],
    ]);
  });

  it("records activity apart from content, and learns the usual gap", async () => {
    await recordActivity(db, "a", "A", "keepalive");
    let st = await db.prisma.collectorStatus.findUniqueOrThrow({
      where: { sourceId_collector: { sourceId: "a", collector: "A" } },
    });
    expect(st).toMatchObject({ lastActivityKind: "keepalive", lastContentAt: null, gapsSeen: 0 });
    await recordContent(db, "a", "A");
    // pretend the last item came 100 s ago, then another arrives
    await db.prisma
      .$executeRaw`UPDATE collector_status SET last_content_at = now() - interval '100 seconds'`;
    await recordContent(db, "a", "A");
    st = await db.prisma.collectorStatus.findUniqueOrThrow({
      where: { sourceId_collector: { sourceId: "a", collector: "A" } },
    });
    expect(st.gapsSeen).toBe(1);
    expect(st.usualGapSeconds).toBeCloseTo(100, 0);
    // a shorter gap moves it down a little, a longer one up more
    await db.prisma
      .$executeRaw`UPDATE collector_status SET last_content_at = now() - interval '50 seconds'`;
    await recordContent(db, "a", "A");
    st = await db.prisma.collectorStatus.findUniqueOrThrow({
      where: { sourceId_collector: { sourceId: "a", collector: "A" } },
    });
    expect(st.usualGapSeconds).toBeCloseTo(99, 0);
    await db.prisma
      .$executeRaw`UPDATE collector_status SET last_content_at = now() - interval '200 seconds'`;
    await recordContent(db, "a", "A");
    st = await db.prisma.collectorStatus.findUniqueOrThrow({
      where: { sourceId_collector: { sourceId: "a", collector: "A" } },
    });
    expect(st.usualGapSeconds).toBeCloseTo(109.1, 0);
    expect(st.gapsSeen).toBe(3);
  });
});
