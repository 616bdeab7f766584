import type { Database } from "@/lib/db";
import { type PageHeadline, pageHeadlines } from "@/workers/collectors/pageHeadlines";
import {
  browserAnswers,
  type FetchSourceOptions,
  type FetchTarget,
  renderPage,
  sharedBrowserPool,
} from "@/workers/fetcher";
import type { BrowserPool } from "@/workers/fetcher/browser";

export interface RenderPreview {
  url: string;
  /** Headlines in the HTML as served. */
  served: number;
  /** Headlines in the DOM the browser built, the first 20 of them listed. */
  rendered: number;
  headlines: PageHeadline[];
  cpuMs: number;
  wallMs: number;
  requests: number;
  blocked: number;
  blockedDetail: { url: string; reason: string }[];
  /** Why there is nothing to compare: the page could not be fetched, or robots.txt refused it. */
  problem: { code: string; message: string } | null;
}

/**
 * What the browser would find on a page source, beside what its HTML as served shows, without
 * writing anything: the dashboard's "try it in a browser" before an operator switches a page to
 * rendering. The page and every request its scripts make go out as a rendered poll's would
 * (browserAnswers: robots.txt, the per-host budget, the SSRF check).
 */
export async function previewRender(
  db: Database,
  source: FetchTarget,
  options: { browser?: BrowserPool; fetch?: FetchSourceOptions } = {},
): Promise<RenderPreview> {
  const answer = browserAnswers(db, source, options.fetch);
  const empty: RenderPreview = {
    url: source.url,
    served: 0,
    rendered: 0,
    headlines: [],
    cpuMs: 0,
    wallMs: 0,
    requests: 1,
    blocked: 0,
    blockedDetail: [],
    problem: null,
  };
  const page = await answer({
    url: source.url,
    method: "GET",
    resourceType: "document",
    headers: { accept: "text/html, application/xhtml+xml;q=0.9, */*;q=0.1" },
  });
  if ("refused" in page) {
    const [code = "blocked", ...rest] = page.refused.split(": ");
    return { ...empty, problem: { code, message: rest.join(": ") || page.refused } };
  }
  if ("failed" in page) {
    const [code = "failed", ...rest] = page.failed.split(": ");
    return { ...empty, problem: { code, message: rest.join(": ") || page.failed } };
  }
  if (page.status !== 200) {
    return {
      ...empty,
      problem: { code: `http_${page.status}`, message: `HTTP ${page.status} from ${source.url}` },
    };
  }
  const served = pageHeadlines(page.body.toString("utf8"), source.url).length;
  const rendered = await renderPage(
    options.browser ?? sharedBrowserPool(),
    { url: source.url, body: page.body, contentType: page.headers["content-type"] },
    answer,
  );
  const headlines = pageHeadlines(rendered.html, source.url);
  return {
    ...empty,
    served,
    rendered: headlines.length,
    headlines: headlines.slice(0, 20),
    cpuMs: rendered.cpuMs,
    wallMs: rendered.wallMs,
    requests: rendered.requests,
    blocked: rendered.blocked,
    blockedDetail: rendered.blockedDetail,
  };
}
