import { createElement, type ReactElement } from "react";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { SourceDetailJson } from "@/components/hooks/useSource";
import { RANGE_HOURS, type TimeRange } from "@/components/ui/timeRanges";
import { sourceDetail } from "@/lib/dashboard/sources";
import { seedDownAndFine } from "@/lib/dashboard/testing";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";

// react-dom ships no types here (no @types/react-dom): its one function used, typed by hand.
const SERVER = "react-dom/server";
const { renderToStaticMarkup } = (await import(SERVER)) as {
  renderToStaticMarkup: (element: ReactElement) => string;
};

// The URL as Next.js hands it to client components, and the answers the page's query gets: the
// API's own (sourceDetail through JSON) for the range it asks, or for none.
const page = vi.hoisted(() => ({
  search: "",
  asked: [] as [string, { range?: string }][],
  answers: new Map<string | undefined, unknown>(),
}));
vi.mock("next/navigation", () => ({
  useSearchParams: () => new URLSearchParams(page.search),
  usePathname: () => "/sources/fine",
}));
vi.mock("@/components/hooks/useSource", () => ({
  useSourceQuery: (id: string, params: { range?: string }) => {
    page.asked.push([id, params]);
    return { data: { source: page.answers.get(params.range) }, error: null };
  },
  useSourceActionMutation: () => ({ isPending: false, mutate: () => {} }),
}));
// The settings form reads its own endpoint; nothing of it is under test here.
vi.mock("./ManageSource", () => ({ ManageSource: () => null }));

const { SourcePage } = await import("./SourcePage");

let db: TestDatabase;
const now = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  await seedDownAndFine(db, now);
  for (const range of [undefined, "1h", "6h", "24h", "7d"] as (TimeRange | undefined)[]) {
    const hours = range ? RANGE_HOURS[range] : undefined;
    const detail = await sourceDetail(db, "fine", { now, hours });
    page.answers.set(range, JSON.parse(JSON.stringify(detail)) as SourceDetailJson);
  }
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(() => {
  page.search = "";
  page.asked.length = 0;
});

const render = () => renderToStaticMarkup(createElement(SourcePage, { id: "fine" }));
const headings = (html: string) =>
  [...html.matchAll(/<h3>(.*?)<\/h3>/g)].map((m) => m[1]?.replace(/<!-- -->/g, ""));
const pressed = (html: string) =>
  [...html.matchAll(/aria-pressed="true"[^>]*>([^<]*)</g)].map((m) => m[1]);

describe("the source page's Fetching charts", () => {
  it("keep the API's own windows until a range is picked, and say them", () => {
    const html = render();
    expect(page.asked.at(-1)).toEqual(["fine", { range: undefined }]);
    expect(headings(html).slice(0, 2)).toEqual([
      "Fetch attempts per 5 minutes, last 1 h",
      "Outcomes by code, last 24 h",
    ]);
    expect(pressed(html)).toEqual(["last 1 h"]);
    expect(html).toContain('href="/sources"');
  });

  it.each([
    ["1h", "Fetch attempts per 5 minutes, last 1 h", "Outcomes by code, last 1 h"],
    ["6h", "Fetch attempts per 5 minutes, last 6 h", "Outcomes by code, last 6 h"],
    ["24h", "Fetch attempts per 10 minutes, last 24 h", "Outcomes by code, last 24 h"],
    ["7d", "Fetch attempts per hour, last 7 d", "Outcomes by code, last 7 d"],
  ])("ask for the URL's range %s and name it in their headings", (range, attempts, codes) => {
    page.search = `?range=${range}`;
    const html = render();
    expect(page.asked.at(-1)).toEqual(["fine", { range }]);
    expect(headings(html).slice(0, 2)).toEqual([attempts, codes]);
    expect(html).toContain(
      `fetch attempts by outcome over the last ${range.replace(/(\d+)/, "$1 ")}`,
    );
    expect(pressed(html)).toEqual([`last ${range.replace(/(\d+)/, "$1 ")}`]);
    // The way back to the list keeps the range.
    expect(html).toContain(`href="/sources?range=${range}"`);
  });

  it("put the picker under the Fetching heading, before its charts", () => {
    const html = render();
    const fetching = html.indexOf("<h2>Fetching</h2>");
    const picker = html.indexOf('aria-label="Time window"');
    const firstChart = html.indexOf("<h3>Fetch attempts");
    expect(fetching).toBeGreaterThan(0);
    expect(picker).toBeGreaterThan(fetching);
    expect(firstChart).toBeGreaterThan(picker);
    expect(html.match(/aria-label="Time window"/g)).toHaveLength(1);
  });
});
