import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadAdminState, SESSION_COOKIE, sealSession } from "@/lib/auth/session";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { startServer, type TestServer } from "@/workers/fetcher/testing/servers";
import { parseSourcesFile } from "@/workers/sources/sourcesFile";
import { syncSources } from "@/workers/sources/syncSources";
import { PATCH as edit, DELETE as remove } from "./[id]/route";
import { GET as settings } from "./[id]/settings/route";
import { POST as discover } from "./discover/route";
import { GET as exportOpml, POST as opml } from "./opml/route";
import { POST as preview } from "./preview/route";
import { POST as add } from "./route";

// The guard reads its settings through lib/config.ts, once: the password must be set first.
const PASSWORD = vi.hoisted(() => {
  process.env.ADMIN_PASSWORD = "correct horse battery staple";
  return process.env.ADMIN_PASSWORD;
});

let db: TestDatabase;
let cookie: string;
let site: TestServer;
const ORIGIN = "http://localhost:3000";
const params = (id: string) => ({ params: Promise.resolve({ id }) });

const RSS = `<?xml version="1.0"?><rss version="2.0"><channel><title>Harbour Wire</title>
<link>http://example.test/</link>
<item><title>First</title><link>http://example.test/1</link><guid>1</guid></item>
<item><title>Second</title><link>http://example.test/2</link><guid>2</guid></item>
</channel></rss>`;

function request(
  path: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return new Request(`${ORIGIN}${path}`, {
    method,
    headers: { "content-type": "application/json", origin: ORIGIN, cookie, ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function answer(res: Response) {
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<unknown> }).wirewatchDb = Promise.resolve(db);
  const state = await loadAdminState(db, PASSWORD);
  cookie = `${SESSION_COOKIE}=${await sealSession(state)}`;
  site = await startServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/") {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(`<!doctype html><html><head><title>Harbour</title>
        <link rel="alternate" type="application/rss+xml" title="Harbour RSS" href="/feed.xml">
        </head><body>news</body></html>`);
    } else if (path === "/feed.xml") {
      res.setHeader("content-type", "application/rss+xml");
      res.setHeader("etag", '"v1"');
      res.setHeader("last-modified", "Wed, 02 Dec 2026 08:00:00 GMT");
      res.end(RSS);
    } else if (path === "/robots.txt") {
      res.setHeader("content-type", "text/plain");
      res.end("User-agent: *\nDisallow: /private/\n");
    } else {
      res.statusCode = 404;
      res.end("not here");
    }
  });
  await syncSources(
    db,
    parseSourcesFile(
      JSON.stringify({
        sources: [
          {
            id: "from-file",
            name: "From the file",
            kind: "feed",
            url: "https://feeds.example.com/a.xml",
          },
        ],
      }),
    ),
  );
});

afterAll(async () => {
  await site?.close();
  await db?.drop();
});

describe("discover and preview", () => {
  it("find the feed a page advertises and preview it: title, entries, validators, verdicts", async () => {
    const found = await answer(
      await discover(
        request("/api/sources/discover", "POST", { url: `${site.origin}/`, allowPrivate: true }),
      ),
    );
    expect(found.status).toBe(200);
    expect(found.body.discovery.candidates).toEqual([
      {
        url: `${site.origin}/feed.xml`,
        title: "Harbour RSS",
        type: "application/rss+xml",
        via: "link",
      },
    ]);
    expect(found.body.discovery.ssrf).toMatchObject({ allowed: true, address: "127.0.0.1" });

    const shown = await answer(
      await preview(
        request("/api/sources/preview", "POST", {
          url: `${site.origin}/feed.xml`,
          allowPrivate: true,
        }),
      ),
    );
    expect(shown.status).toBe(200);
    expect(shown.body.preview).toMatchObject({
      ok: true,
      feed: { title: "Harbour Wire", format: "rss2", entryCount: 2 },
      validators: { etag: '"v1"', lastModified: "Wed, 02 Dec 2026 08:00:00 GMT" },
      robots: { allowed: true },
      ssrf: { allowed: true },
      fetch: { code: "ok", status: 200 },
    });
    expect(shown.body.preview.feed.entries.map((e: { title: string }) => e.title)).toEqual([
      "First",
      "Second",
    ]);
  });

  it("say what robots.txt refuses and what is not a feed, with the fetcher's codes", async () => {
    const robots = await answer(
      await preview(
        request("/api/sources/preview", "POST", {
          url: `${site.origin}/private/feed.xml`,
          allowPrivate: true,
        }),
      ),
    );
    expect(robots.body.preview).toMatchObject({
      ok: false,
      robots: { allowed: false },
      problem: { code: "blocked_robots" },
    });
    const page = await answer(
      await preview(
        request("/api/sources/preview", "POST", { url: `${site.origin}/`, allowPrivate: true }),
      ),
    );
    expect(page.body.preview).toMatchObject({ ok: false, problem: { code: "parse_error" } });
    const none = await answer(
      await discover(
        request("/api/sources/discover", "POST", {
          url: `${site.origin}/nothing`,
          allowPrivate: true,
        }),
      ),
    );
    expect(none.body.discovery).toMatchObject({ candidates: [], problem: { code: "http_404" } });
  });

  it("refuse hostile URLs with the SSRF reason, and bad input with a 400, before any request", async () => {
    const before = site.hits();
    for (const url of [
      "http://169.254.169.254/latest/meta-data/",
      site.origin,
      "http://metadata.google.internal/",
    ]) {
      for (const route of [discover, preview]) {
        const refused = await answer(await route(request("/api/sources/x", "POST", { url })));
        expect(refused.status, url).toBe(422);
        expect(refused.body.error.code).toBe("blocked_ssrf");
        expect(refused.body.error.message).toMatch(
          /refused: .*(link-local|linkLocal|loopback|internal)/,
        );
      }
    }
    for (const body of [
      { url: "not a url" },
      { url: "ftp://example.com/feed" },
      { url: "http://u:p@example.com/" },
      { nope: 1 },
      "{",
    ]) {
      const bad = await answer(await discover(request("/api/sources/discover", "POST", body)));
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.code).toBe("bad_request");
    }
    expect(site.hits()).toBe(before);
  });

  it("are admin only: no session is a 401, another origin a 403", async () => {
    const anonymous = await discover(
      request("/api/sources/discover", "POST", { url: site.origin }, { cookie: "" }),
    );
    expect(anonymous.status).toBe(401);
    const crossSite = await preview(
      request(
        "/api/sources/preview",
        "POST",
        { url: site.origin },
        { origin: "https://evil.test" },
      ),
    );
    expect(crossSite.status).toBe(403);
  });
});

describe("add, edit, remove", () => {
  it("add a feed with its settings, audited, its fetch job waiting at once", async () => {
    const added = await answer(
      await add(
        request("/api/sources", "POST", {
          url: `${site.origin}/feed.xml`,
          name: "Harbour Wire",
          kind: "feed",
          pollIntervalSeconds: 60,
          collectors: ["A", "B"],
          allowPrivate: true,
        }),
      ),
    );
    expect(added.status).toBe(201);
    const id = added.body.result.sourceId as string;
    expect(id).toMatch(/^127\.0\.0\.1-[0-9a-f]{10}$/);
    const row = await db.prisma.source.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({
      configOrigin: "dashboard",
      pollIntervalSeconds: 60,
      collectors: ["A", "B"],
      allowPrivate: true,
      enabled: true,
    });
    const jobs = await db.prisma.job.findMany({ where: { sourceId: id }, orderBy: { key: "asc" } });
    expect(jobs.map((j) => j.key)).toEqual([`${id}/A`, `${id}/B`]);
    const audit = await db.prisma.adminAudit.findFirstOrThrow({ where: { action: "sources.add" } });
    expect(audit.target).toEqual({ sourceId: id });

    const rediscovered = await answer(
      await discover(
        request("/api/sources/discover", "POST", { url: `${site.origin}/`, allowPrivate: true }),
      ),
    );
    expect(rediscovered.body.discovery.candidates[0].existingId).toBe(id);

    const again = await answer(
      await add(
        request("/api/sources", "POST", {
          url: `${site.origin}/feed.xml/`,
          allowPrivate: true,
          id: "other",
        }),
      ),
    );
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "already_a_source" });
    const taken = await answer(
      await add(
        request("/api/sources", "POST", { url: "https://b.example.com/f.xml", id: "from-file" }),
      ),
    );
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toContain("from the sources file");
  });

  it("refuse bad fields with a 400 naming them, and private URLs without allowPrivate with a 422", async () => {
    const cases: [unknown, string][] = [
      [{ url: "https://a.example.com/f.xml", pollIntervalSeconds: 1 }, "pollIntervalSeconds"],
      [{ url: "https://a.example.com/f.xml", collectors: ["A B"] }, "collectors"],
      [{ url: "https://a.example.com/f.xml", id: "bad id" }, "id"],
      [{ url: "https://a.example.com/f.xml", id: "discover" }, "reserved"],
      [{ url: "https://a.example.com/f.xml", kind: "story-api" }, "tickers"],
      [{ url: "https://a.example.com/f.xml", tickers: ["ACME"] }, "tickers"],
      [{ url: "https://a.example.com/f.xml", kind: "podcast" }, "kind"],
      [{ url: "nope" }, "url"],
    ];
    for (const [body, field] of cases) {
      const bad = await answer(await add(request("/api/sources", "POST", body)));
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.message).toContain(field);
    }
    const privateUrl = await answer(
      await add(request("/api/sources", "POST", { url: "http://10.1.2.3/feed.xml" })),
    );
    expect(privateUrl.status).toBe(422);
    expect(privateUrl.body.error).toMatchObject({ code: "blocked_ssrf" });
    expect(privateUrl.body.error.message).toContain("10.1.2.3 is private");
  });

  it("edit a dashboard source (audited, what changed); a file source is refused with 409", async () => {
    const id = (await db.prisma.source.findFirstOrThrow({ where: { configOrigin: "dashboard" } }))
      .id;
    const edited = await answer(
      await edit(
        request(`/api/sources/${id}`, "PATCH", { pollIntervalSeconds: 120, collectors: ["A"] }),
        params(id),
      ),
    );
    expect(edited.status).toBe(200);
    expect(edited.body.result.message).toBe("saved: pollIntervalSeconds, collectors");
    expect(await db.prisma.job.count({ where: { sourceId: id } })).toBe(1);
    const shown = await answer(
      await settings(request(`/api/sources/${id}/settings`, "GET"), params(id)),
    );
    expect(shown.body.settings).toMatchObject({
      pollIntervalSeconds: 120,
      collectors: ["A"],
      editable: true,
      configOrigin: "dashboard",
    });

    const file = await answer(
      await edit(
        request("/api/sources/from-file", "PATCH", { name: "Mine now" }),
        params("from-file"),
      ),
    );
    expect(file.status).toBe(409);
    expect(file.body.error.code).toBe("file_source");
    const fileRemove = await answer(
      await remove(request("/api/sources/from-file", "DELETE", {}), params("from-file")),
    );
    expect(fileRemove.status).toBe(409);
    expect((await db.prisma.source.findUniqueOrThrow({ where: { id: "from-file" } })).name).toBe(
      "From the file",
    );
    const fileSettings = await answer(
      await settings(request("/api/sources/from-file/settings", "GET"), params("from-file")),
    );
    expect(fileSettings.body.settings).toMatchObject({ configOrigin: "file", editable: false });

    const missing = await edit(
      request("/api/sources/nope", "PATCH", { name: "x" }),
      params("nope"),
    );
    expect(missing.status).toBe(404);
    const badField = await answer(
      await edit(request(`/api/sources/${id}`, "PATCH", { kind: "page" }), params(id)),
    );
    expect(badField.status).toBe(400);
  });

  it("remove keeps the row, its items and its audit; it stays off and cannot be edited", async () => {
    const source = await db.prisma.source.findFirstOrThrow({
      where: { configOrigin: "dashboard" },
    });
    await db.prisma.news.create({
      data: {
        entryKey: `${source.id}:1`,
        sourceId: source.id,
        canonicalId: "1",
        quality: "authoritative",
        title: "kept",
        firstSeenAt: new Date(),
        firstSource: source.id,
        firstCollector: "A",
        lastResult: "inserted",
      },
    });
    const removed = await answer(
      await remove(request(`/api/sources/${source.id}`, "DELETE", {}), params(source.id)),
    );
    expect(removed.status).toBe(200);
    expect(removed.body.result.message).toMatch(/^removed; 1 waiting job\(s\) dropped/);
    const row = await db.prisma.source.findUniqueOrThrow({
      where: { id: source.id },
      include: { state: true },
    });
    expect(row.enabled).toBe(false);
    expect(row.state?.disabledReason).toBe("removed by admin");
    expect(await db.prisma.news.count({ where: { sourceId: source.id } })).toBe(1);
    expect(await db.prisma.job.count({ where: { sourceId: source.id } })).toBe(0);
    const again = await answer(
      await edit(
        request(`/api/sources/${source.id}`, "PATCH", { name: "back" }),
        params(source.id),
      ),
    );
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("removed");
    const actions = (await db.prisma.adminAudit.findMany({ orderBy: { id: "asc" } })).map(
      (a) => a.action,
    );
    expect(actions).toEqual(["sources.add", "sources.edit", "sources.remove"]);
  });

  it("story-api: added with its tickers, and a ticker added on edit is loaded at once", async () => {
    const secret = `whsec_${Buffer.from("0123456789abcdef0123").toString("base64")}`;
    const added = await answer(
      await add(
        request("/api/sources", "POST", {
          id: "desk",
          kind: "story-api",
          url: "https://stories.example.com/api",
          tickers: ["ACME"],
          webhookSecrets: [secret],
        }),
      ),
    );
    expect(added.status).toBe(201);
    const catchUp = () =>
      db.prisma.job.findFirstOrThrow({ where: { queue: "story", key: "catchup:desk" } });
    // Not due for an hour, as after a catch-up that found nothing.
    await db.prisma.job.update({
      where: { id: (await catchUp()).id },
      data: { runAt: new Date(Date.now() + 3_600_000) },
    });
    const edited = await answer(
      await edit(
        request("/api/sources/desk", "PATCH", { tickers: ["ACME", "GLOBX"] }),
        params("desk"),
      ),
    );
    expect(edited.body.result.message).toBe("saved: tickers");
    const tickers = await db.prisma.storyTicker.findMany({
      where: { sourceId: "desk" },
      orderBy: { ticker: "asc" },
    });
    expect(tickers.map((t) => [t.ticker, t.loadedAt])).toEqual([
      ["ACME", null],
      ["GLOBX", null],
    ]);
    expect((await catchUp()).runAt.getTime()).toBeLessThanOrEqual(Date.now());
    const shown = await answer(
      await settings(request("/api/sources/desk/settings", "GET"), params("desk")),
    );
    // The secret's value never leaves the database: the form and the audit see a count.
    expect(shown.body.settings).toMatchObject({ tickers: ["ACME", "GLOBX"], webhookSecrets: 1 });
    const audit = await db.prisma.adminAudit.findMany({ select: { target: true, detail: true } });
    expect(JSON.stringify(audit)).not.toContain(secret);
    await remove(request("/api/sources/desk", "DELETE", {}), params("desk"));
  });

  it("the sources file's sync leaves a dashboard source of the same id alone", async () => {
    await add(
      request("/api/sources", "POST", {
        url: "https://c.example.com/f.xml",
        id: "shared-id",
        name: "Dashboard's",
      }),
    );
    const { skipped } = await syncSources(
      db,
      parseSourcesFile(
        JSON.stringify({
          sources: [
            { id: "shared-id", name: "File's", kind: "feed", url: "https://d.example.com/f.xml" },
          ],
        }),
      ),
    );
    expect(skipped).toEqual(["shared-id"]);
    expect(await db.prisma.source.findUniqueOrThrow({ where: { id: "shared-id" } })).toMatchObject({
      name: "Dashboard's",
      configOrigin: "dashboard",
      enabled: true,
    });
    // The file no longer naming "from-file" switches it off; the dashboard's source stays on.
    expect((await db.prisma.source.findUniqueOrThrow({ where: { id: "from-file" } })).enabled).toBe(
      false,
    );
  });
  it("files a dashboard source in a folder, moves it, and brings it back to the top; a bad folder is a 400", async () => {
    const added = await answer(
      await add(
        request("/api/sources", "POST", {
          id: "filed",
          url: `${site.origin}/filed.xml`,
          allowPrivate: true,
          folder: "News",
        }),
      ),
    );
    expect(added.status).toBe(201);
    const id = "filed";
    expect((await db.prisma.source.findUniqueOrThrow({ where: { id } })).folder).toBe("News");
    const folderOf = async () =>
      (await db.prisma.source.findUniqueOrThrow({ where: { id } })).folder;
    const patch = (body: unknown) =>
      edit(request(`/api/sources/${id}`, "PATCH", body), params(id)).then(answer);

    expect((await patch({ folder: "News/Tech" })).body.result.message).toBe("saved: folder");
    expect(await folderOf()).toBe("News/Tech");
    const shown = await answer(
      await settings(request(`/api/sources/${id}/settings`, "GET"), params(id)),
    );
    expect(shown.body.settings.folder).toBe("News/Tech");
    // An edit that names no folder keeps it.
    await patch({ pollIntervalSeconds: 90 });
    expect(await folderOf()).toBe("News/Tech");
    await patch({ folder: null });
    expect(await folderOf()).toBeNull();

    const tooLong = await patch({ folder: "x".repeat(201) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toMatch(/^folder: /);
    expect(await folderOf()).toBeNull();
  });
});

describe("OPML", () => {
  const NESTED = `<?xml version="1.0"?>
<opml version="2.0"><head><title>Mine</title></head><body>
  <outline text="News">
    <outline text="World">
      <outline type="rss" text="Alpha" xmlUrl="https://alpha.example.com/feed.xml"/>
    </outline>
    <outline type="rss" text="Beta" xmlUrl="https://beta.example.com/rss"/>
  </outline>
  <outline type="rss" text="Broken" xmlUrl="not a url"/>
  <outline type="rss" text="Inside" xmlUrl="http://192.168.1.10/feed"/>
</body></opml>`;

  it("dry run shows the plan with problems by line and writes nothing; the import adds the good lines", async () => {
    const sourcesBefore = await db.prisma.source.count();
    const dry = await answer(
      await opml(request("/api/sources/opml", "POST", { opml: NESTED, dryRun: true })),
    );
    expect(dry.status).toBe(200);
    expect(dry.body.applied).toBeNull();
    expect(
      dry.body.plan.add.map((s: { name: string; folder: string[]; line: number }) => [
        s.name,
        s.folder,
        s.line,
      ]),
    ).toEqual([
      ["Alpha", ["News", "World"], 5],
      ["Beta", ["News"], 7],
    ]);
    expect(
      dry.body.plan.problems.map((p: { line: number; code: string }) => [p.line, p.code]),
    ).toEqual([
      [9, "invalid_url"],
      [10, "blocked_ssrf"],
    ]);
    expect(await db.prisma.source.count()).toBe(sourcesBefore);

    const done = await answer(
      await opml(
        request("/api/sources/opml", "POST", { opml: NESTED, dryRun: false, file: "mine.opml" }),
      ),
    );
    expect(done.body.applied.added).toHaveLength(2);
    expect(await db.prisma.source.count()).toBe(sourcesBefore + 2);
    expect(
      await db.prisma.job.count({
        where: { sourceId: { in: done.body.applied.added.map((s: { id: string }) => s.id) } },
      }),
    ).toBe(2);

    const exported = await exportOpml(request("/api/sources/opml", "GET"));
    expect(exported.headers.get("content-type")).toContain("opml");
    const text = await exported.text();
    expect(text).toContain('xmlUrl="https://alpha.example.com/feed.xml"');
  });

  it("refuses a body without the OPML or the dry-run flag with a 400", async () => {
    for (const body of [{ dryRun: true }, { opml: "", dryRun: true }, { opml: NESTED }]) {
      const bad = await answer(await opml(request("/api/sources/opml", "POST", body)));
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    const malformed = await answer(
      await opml(
        request("/api/sources/opml", "POST", { opml: "<opml><body><outline", dryRun: true }),
      ),
    );
    expect(malformed.status).toBe(200);
    expect(malformed.body.plan.readable).toBe(false);
    expect(malformed.body.plan.problems[0]).toMatchObject({ line: 1 });
  });
});
