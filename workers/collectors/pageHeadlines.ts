import { parse } from "node-html-parser";
import { canonicalizeUrl } from "@/lib/canonical";

export interface PageHeadline {
  title: string;
  link: string;
}

/** Where news pages put their headline links: article teasers, headings, headline lists. */
export const HEADLINE_SELECTOR = [
  "article a[href]",
  "h1 a[href]",
  "h2 a[href]",
  "h3 a[href]",
  "a.headline[href]",
  ".headlines a[href]",
  "[itemprop=headline] a[href]",
].join(", ");

/**
 * Reads headlines off a rendered page, as the fallback observer sees them: a title and a link,
 * nothing else (no category, breaking flag or instruments). `selector` picks the headline
 * anchors; the default fits the usual markup (see HEADLINE_SELECTOR).
 * Links are resolved against the page URL; anchors without text or an http(s) link are skipped,
 * and each link counts once (the first anchor wins), since pages repeat links in teasers.
 */
export function pageHeadlines(
  html: string,
  pageUrl: string,
  selector = HEADLINE_SELECTOR,
  limit = 200,
): PageHeadline[] {
  const root = parse(html, { comment: false, blockTextElements: { script: false, style: false } });
  const seen = new Set<string>();
  const out: PageHeadline[] = [];
  for (const a of root.querySelectorAll(selector)) {
    const title = a.text.replace(/\s+/g, " ").trim();
    const href = a.getAttribute("href");
    if (!title || !href) continue;
    let link: string;
    try {
      link = canonicalizeUrl(href, pageUrl);
    } catch {
      continue;
    }
    if (!/^https?:/.test(link) || seen.has(link)) continue;
    seen.add(link);
    out.push({ title: title.slice(0, 2_000), link });
    if (out.length >= limit) break;
  }
  return out;
}
