import { createElement, type ReactElement } from "react";
import { beforeEach, describe, expect, it, vi } from "vitest";

// react-dom ships no types here (no @types/react-dom): its one function used, typed by hand.
const SERVER = "react-dom/server";
const { renderToStaticMarkup } = (await import(SERVER)) as {
  renderToStaticMarkup: (element: ReactElement) => string;
};

// The URL as Next.js hands it to client components; each test sets its own.
const url = vi.hoisted(() => ({ search: "" }));
vi.mock("next/navigation", () => ({
  useSearchParams: () => new URLSearchParams(url.search),
  usePathname: () => "/queues",
}));

const { Nav } = await import("../Nav");
const { TimeRangePicker } = await import("./TimeRange");
const { PAGES } = await import("../pages");

const hrefs = (html: string) =>
  [...html.matchAll(/<a [^>]*class="nav-link"[^>]*>/g)].map(
    (m) => m[0].match(/href="([^"]*)"/)?.[1],
  );
const pressed = (html: string) =>
  [...html.matchAll(/aria-pressed="true"[^>]*>([^<]*)</g)].map((m) => m[1]);

beforeEach(() => {
  url.search = "";
});

describe("the shared time range", () => {
  it("goes with every navigation link once picked, and not before", () => {
    expect(hrefs(renderToStaticMarkup(createElement(Nav)))).toEqual(PAGES.map((p) => p.href));
    url.search = "?range=7d";
    expect(hrefs(renderToStaticMarkup(createElement(Nav)))).toEqual(
      PAGES.map((p) => `${p.href}?range=7d`),
    );
    // A range the dashboard does not have is not carried on.
    url.search = "?range=2h";
    expect(hrefs(renderToStaticMarkup(createElement(Nav)))).toEqual(PAGES.map((p) => p.href));
  });

  it("presses the URL's range, else the page's default, and says what the page shows", () => {
    expect(pressed(renderToStaticMarkup(createElement(TimeRangePicker)))).toEqual(["last 1 h"]);
    expect(
      pressed(renderToStaticMarkup(createElement(TimeRangePicker, { fallback: "24h" }))),
    ).toEqual(["last 24 h"]);
    url.search = "?range=6h";
    const html = renderToStaticMarkup(
      createElement(TimeRangePicker, { fallback: "24h", note: "showing 6 h" }),
    );
    expect(pressed(html)).toEqual(["last 6 h"]);
    expect(html).toContain("showing 6 h");
    expect([...html.matchAll(/<button/g)]).toHaveLength(4);
  });
});
