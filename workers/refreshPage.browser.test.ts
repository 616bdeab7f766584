import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Simulator, startSimulator } from "@/simulator/server";
import { type SourceRef, toSourceRef } from "@/workers/collectors/sourceRef";
import { BrowserPool, BrowserUnavailableError, chromiumPath } from "@/workers/fetcher/browser";
import { RateBudget } from "@/workers/fetcher/rateBudget";
import { startServer } from "@/workers/fetcher/testing/servers";
import { sourceSchema } from "@/workers/sources/sourcesFile";
import { syncSources } from "@/workers/sources/syncSources";
import { refreshPage } from "./refreshPage";

// The browser fetch path against the simulator's script-built front page (simulator/render/
// page.ts renderScriptedPage): its HTML has no headlines, its script fetches them.

const chromium = chromiumPath();
if (!chromium) {
  console.warn(
    "SKIPPED workers/refreshPage.browser.test.ts: no Chromium (install Debian's chromium or set WIREWATCH_CHROMIUM)",
  );
}

let sim: Simulator;
let db: TestDatabase;
let pool: BrowserPool;

async function source(id: string, render: "http" | "browser"): Promise<SourceRef> {
  const row = await db.prisma.source.findUniqueOrThrow({ where: { id } });
  return { ...(toSourceRef(row) as SourceRef), render };
}

beforeAll(async () => {
  if (!chromium) return;
  sim = await startSimulator({ seed: 11, manual: true, backlogMs: 5 * 60_000 });
  db = await createTestDatabase();
  const page = {
    name: "Wire (scripted page)",
    kind: "page",
    url: `${sim.url}/s/wire-js/`,
    allowPrivate: true,
    collectors: ["A"],
  };
  await syncSources(db, [
    sourceSchema.parse({ ...page, id: "wire-js", render: "browser" }),
    sourceSchema.parse({ ...page, id: "wire-js-served" }),
  ]);
  pool = new BrowserPool({ contexts: 1 });
}, 60_000);
afterAll(async () => {
  await pool?.close();
  await sim?.stop();
  await db?.drop();
});

describe.skipIf(!chromium)("the browser fetch path", () => {
  it("finds the headlines a script puts on the page, where the HTML as served has none", async () => {
    const expected = sim.control.truth().items.filter((i) => i.sourceId === "wire-page").length;

    const served = await refreshPage(db, await source("wire-js-served", "http"), "A", null, {
      robots: false,
    });
    expect(served).toMatchObject({ code: "ok", entries: 0 });

    const rendered = await refreshPage(
      db,
      await source("wire-js", "browser"),
      "A",
      null,
      { robots: false },
      undefined,
      { browser: pool },
    );
    expect(rendered.code).toBe("ok");
    expect(rendered.entries).toBeGreaterThan(0);
    if (expected > 0) expect(rendered.entries).toBe(expected);
    expect(await db.prisma.news.count({ where: { sourceId: "wire-js" } })).toBe(rendered.changed);

    const looks = await db.prisma.pageLook.findMany({ orderBy: { id: "asc" } });
    expect(looks.map((l) => [l.sourceId, l.mode, l.code, l.headlines])).toEqual([
      ["wire-js-served", "http", "ok", 0],
      ["wire-js", "browser", "ok", rendered.entries],
    ]);
    const browserLook = looks[1];
    // The page (fetched once, by the poll) and its headlines.json.
    expect(browserLook?.requests).toBe(2);
    expect(browserLook?.blocked).toBe(0);
    expect(browserLook?.cpuMs).toBeGreaterThan(0);
  }, 60_000);

  it("refuses what a hostile script asks for (loopback, metadata, intranet names) and records it", async () => {
    sim.control.inject("wire-js", { kind: "hostile-script" });
    const since = Date.now();
    try {
      const outcome = await refreshPage(
        db,
        await source("wire-js", "browser"),
        "A",
        null,
        { robots: false },
        undefined,
        { browser: pool },
      );
      expect(outcome.code).toBe("ok");
      expect(outcome.entries).toBeGreaterThan(0);
    } finally {
      sim.control.clear("wire-js", "hostile-script");
    }
    const look = await db.prisma.pageLook.findFirstOrThrow({
      where: { sourceId: "wire-js" },
      orderBy: { id: "desc" },
    });
    expect(look.blocked).toBe(4);
    const detail = look.blockedDetail as { url: string; reason: string }[];
    const reasons = Object.fromEntries(detail.map((d) => [new URL(d.url).hostname, d.reason]));
    expect(Object.keys(reasons).sort()).toEqual([
      "127.0.0.1",
      "169.254.169.254",
      "localhost",
      "metadata.google.internal",
    ]);
    for (const reason of Object.values(reasons)) expect(reason).toMatch(/^blocked_ssrf: /);
    expect(reasons["169.254.169.254"]).toMatch(/linkLocal/);
    // The source may reach its own loopback origin, not the simulator under another name.
    const reached = sim.control.requests({ sinceMs: since });
    expect(reached.filter((r) => !r.host.startsWith("127.0.0.1:"))).toEqual([]);
    expect(reached.map((r) => r.path)).toEqual(["/s/wire-js/", "/s/wire-js/headlines.json"]);
  }, 60_000);

  it("counts the browser's requests and the HTTP polls in one per-host budget (the simulator's log)", async () => {
    const ratePerSecond = 1;
    const burst = 1;
    const budget = new RateBudget({ ratePerSecond, burst });
    const options = { robots: false as const, deps: { rateBudget: budget } };
    const since = Date.now();
    const looks = [];
    for (let i = 0; i < 3; i++) {
      looks.push(refreshPage(db, await source("wire-js-served", "http"), "A", null, options));
      looks.push(
        refreshPage(db, await source("wire-js", "browser"), "A", null, options, undefined, {
          browser: pool,
        }),
      );
    }
    expect((await Promise.all(looks)).map((o) => o.code)).toEqual(Array(6).fill("ok"));
    const times = sim.control
      .requests({ sinceMs: since })
      .filter((r) => r.host === new URL(sim.url).host)
      .map((r) => r.at);
    // 3 HTTP looks + 3 renders of 2 requests each.
    expect(times).toHaveLength(9);
    // A token bucket allows at most burst + rate·t requests in any window of t seconds. The
    // budget is taken just before a request is dialled and the log stamps its arrival; 350 ms
    // covers what lies between on a busy 2-core machine (this test's own database statements
    // and Chromium share the event loop). Uncounted browser requests would arrive right after
    // their page, one token too soon.
    for (let i = 0; i < times.length; i++) {
      for (let j = i; j < times.length; j++) {
        const seconds = ((times[j] as number) - (times[i] as number) + 350) / 1000;
        expect(j - i + 1).toBeLessThanOrEqual(burst + ratePerSecond * seconds + 1e-9);
      }
    }
  }, 60_000);
});

describe.skipIf(!chromium)("a page whose script never yields", () => {
  it("is closed at its deadline: a parse_error saying so, the renderer's time recorded", async () => {
    const local = await createTestDatabase();
    const site = await startServer((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(
        "<!doctype html><html><body><h2><a href='/a'>Never shown</a></h2>" +
          "<script>for (;;) {}</script></body></html>",
      );
    });
    const own = new BrowserPool({ contexts: 1 });
    try {
      await syncSources(local, [
        sourceSchema.parse({
          id: "busy",
          name: "Busy",
          kind: "page",
          url: `${site.origin}/`,
          allowPrivate: true,
          render: "browser",
        }),
      ]);
      const ref = toSourceRef(
        await local.prisma.source.findUniqueOrThrow({ where: { id: "busy" } }),
      ) as SourceRef;
      const started = Date.now();
      const outcome = await refreshPage(local, ref, "A", null, { robots: false }, undefined, {
        browser: own,
        renderLimits: { deadlineMs: 1_500 },
      });
      expect(outcome.code).toBe("parse_error");
      // The deadline, the 5 s to read the DOM, and no more.
      expect(Date.now() - started).toBeLessThan(15_000);
      const look = await local.prisma.pageLook.findFirstOrThrow();
      expect(look.message).toMatch(/^browser: the page did not finish within 7 s/);
      expect(look.cpuMs).toBeGreaterThanOrEqual(6_000);
      const state = await local.prisma.sourceState.findUniqueOrThrow({
        where: { sourceId: "busy" },
      });
      expect(state.lastErrorCode).toBe("parse_error");
    } finally {
      await own.close();
      await site.close();
      await local.drop();
    }
  }, 60_000);
});

describe("without a Chromium", () => {
  it("a rendered look fails its job with the reason, and the source's breaker hears nothing", async () => {
    const local = await createTestDatabase();
    const server = await startSimulator({ seed: 3, manual: true });
    const missing = new BrowserPool({ executablePath: "/nonexistent/chromium" });
    try {
      await syncSources(local, [
        sourceSchema.parse({
          id: "js",
          name: "Scripted",
          kind: "page",
          url: `${server.url}/s/wire-js/`,
          allowPrivate: true,
          render: "browser",
        }),
      ]);
      const row = await local.prisma.source.findUniqueOrThrow({ where: { id: "js" } });
      const ref = toSourceRef(row) as SourceRef;
      expect(ref.render).toBe("browser");
      const look = refreshPage(local, ref, "A", null, { robots: false }, undefined, {
        browser: missing,
      });
      await expect(look).rejects.toThrow(BrowserUnavailableError);
      await expect(look).rejects.toThrow(/WIREWATCH_CHROMIUM names \/nonexistent\/chromium/);
      const state = await local.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: "js" } });
      expect(state).toMatchObject({ breakerFailures: 0, breakerState: "closed" });
      expect(await local.prisma.pageLook.count()).toBe(0);
    } finally {
      await server.stop();
      await local.drop();
    }
  }, 60_000);
});
