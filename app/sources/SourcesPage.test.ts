import { createElement, type ReactElement } from "react";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { SourceRowJson } from "@/components/hooks/useSources";
import { listSources } from "@/lib/dashboard/sources";
import { seedDownAndFine, seedSource } from "@/lib/dashboard/testing";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";

// react-dom ships no types here (no @types/react-dom): its one function used, typed by hand.
const SERVER = "react-dom/server";
const { renderToStaticMarkup } = (await import(SERVER)) as {
  renderToStaticMarkup: (element: ReactElement) => string;
};

// The URL as Next.js hands it to client components, and the list as GET /api/sources answers it.
const page = vi.hoisted(() => ({
  search: "",
  sources: [] as unknown[],
  asked: undefined as unknown,
}));
vi.mock("next/navigation", () => ({
  useSearchParams: () => new URLSearchParams(page.search),
  usePathname: () => "/sources",
}));
vi.mock("@/components/hooks/useSources", () => ({
  useSourcesQuery: (params: unknown) => {
    page.asked = params;
    return { data: { sources: page.sources, nextCursor: "next" }, error: null, isFetching: false };
  },
}));
// The add and import forms post to their own endpoints; nothing of them is under test here.
vi.mock("./AddSource", () => ({ AddSource: () => null }));
vi.mock("./OpmlImport", () => ({ OpmlImport: () => null }));

const { SourcesPage } = await import("./SourcesPage");

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const now = new Date();
  await seedDownAndFine(db, now);
  // An id that needs escaping in a path keeps its escape beside the range.
  await seedSource(db, "a b/c");
  page.sources = JSON.parse(
    JSON.stringify((await listSources(db, {}, now)).sources),
  ) as SourceRowJson[];
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(() => {
  page.search = "";
});

const sourceLinks = () =>
  [...renderToStaticMarkup(createElement(SourcesPage)).matchAll(/href="(\/sources\/[^"]*)"/g)].map(
    (m) => m[1]?.replace(/&amp;/g, "&"),
  );

describe("the Sources list's links", () => {
  it("open each source with the picked range", () => {
    page.search = "?range=7d";
    expect(sourceLinks()).toEqual([
      "/sources/a%20b%2Fc?range=7d",
      "/sources/down?range=7d",
      "/sources/fine?range=7d",
    ]);
  });

  it("carry no range when none was picked, nor one the dashboard does not have", () => {
    const plain = ["/sources/a%20b%2Fc", "/sources/down", "/sources/fine"];
    expect(sourceLinks()).toEqual(plain);
    page.search = "?range=2h";
    expect(sourceLinks()).toEqual(plain);
  });
});

describe("the Sources list's controls", () => {
  it("asks the server for the first page by name, and offers its filters, order and pages", () => {
    const html = renderToStaticMarkup(createElement(SourcesPage));
    expect(page.asked).toMatchObject({ sort: "name", dir: "asc", cursor: null, q: "", health: "" });
    for (const name of ["q", "health", "breaker", "kind", "sort", "dir"]) {
      expect(html).toContain(`name="${name}"`);
    }
    expect(html).toContain('<option value="errorRate">');
    expect(html).toContain('<option value="half_open">half-open</option>');
    // The answer has a next page: Next is enabled, Previous is not on the first.
    expect(html).toMatch(/<button type="button"[^>]*disabled=""[^>]*>← Previous<\/button>/);
    expect(html).toMatch(/<button type="button"[^>]*>Next →<\/button>/);
    expect(html).not.toMatch(/disabled=""[^>]*>Next →/);
  });
});
