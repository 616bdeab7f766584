import { createHash } from "node:crypto";
import { canonicalizeUrl } from "@/lib/canonical";
import { textProblem } from "@/lib/validation";
import { blockedAddressReason, blockedHostnameReason, ipLiteral } from "@/workers/fetcher/ssrf";
import { type SourceConfig, sourceSchema } from "@/workers/sources/sourcesFile";
import { folderPath, folderProblem } from "./folder";
import type { OpmlDocument, OpmlFeed } from "./parse";
import { byLine, type OpmlProblem, problem } from "./problems";

/**
 * What an import would do, worked out without writing anything: which feeds become sources
 * (with the id, name and settings they get) and which are skipped, and why, by line. Pure, so a
 * dry run, the CLI and a dashboard page all show the same plan that applyImport then carries out.
 */

/** A source as the plan compares against: every kind, enabled or not, file or dashboard. */
export interface ExistingSource {
  id: string;
  url: string | null;
  configOrigin: string;
}

export interface PlannedSource {
  line: number;
  id: string;
  name: string;
  /** The URL as the WHATWG parser writes it (host lower-cased, default port dropped). */
  url: string;
  /** The folders it is nested in, outermost first; stored as `config.folder` ("News/Tech"). */
  folder: string[];
  /** OPML 2.0's category attribute: reported, not stored. */
  categories: string[];
  /** The source row's settings: the sources file's defaults for a feed (sourceSchema). */
  config: SourceConfig;
}

export interface ImportPlan {
  readable: boolean;
  opml: { version: string | null; title: string | null };
  add: PlannedSource[];
  /** Every outline not added, and every problem of the file, by line. */
  problems: OpmlProblem[];
  errors: number;
}

export interface PlanOptions {
  /**
   * The imported sources may reach loopback and private addresses (an intranet, the simulator),
   * as `"allowPrivate": true` in the sources file does; the SSRF check of the URL is skipped.
   */
  allowPrivate?: boolean;
}

/** One import adds at most this many: the sources file's own limit (sourcesFileSchema). */
export const MAX_IMPORTED_SOURCES = 10_000;
const MAX_URL_LENGTH = 2_048;
const MAX_NAME_LENGTH = 200;

// FreshRSS exports the pages it scrapes (type "HTML+XPath", "XML+XPath", "JSON+DotNotation")
// beside its feeds, with the page's address in xmlUrl; fetched as a feed they would only fail.
const SCRAPER_TYPE = /xpath|dotnotation/i;

type Checked = { url: URL } | { problem: OpmlProblem };

/**
 * The URL checks a feed URL passes before it becomes a source. The address a name resolves to is
 * not looked up here: the fetcher checks it on every fetch and every redirect
 * (workers/fetcher/resolveChecked.ts), and DNS at import time would prove nothing about later.
 */
function checkUrl(feed: OpmlFeed, allowPrivate: boolean): Checked {
  const raw = feed.xmlUrl;
  const at = (code: Parameters<typeof problem>[1], message: string) => ({
    problem: problem(feed.line, code, message, { url: raw }),
  });
  if (raw.length > MAX_URL_LENGTH) {
    return at("invalid_url", `xmlUrl is ${raw.length} characters long (at most ${MAX_URL_LENGTH})`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return at("invalid_url", `xmlUrl "${raw}" is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return at("unsupported_scheme", `xmlUrl "${raw}" is ${url.protocol} (only http and https)`);
  }
  if (url.username || url.password) {
    // A password in the URL would be shown on the Sources page and written into every export.
    return at("invalid_url", `xmlUrl "${url.host}…" carries a user name or password`);
  }
  if (SCRAPER_TYPE.test(feed.type ?? "")) {
    return at("not_a_feed", `type "${feed.type}" is a scraped page, not a feed (${raw})`);
  }
  if (!allowPrivate) {
    const literal = ipLiteral(url);
    const reason = literal ? blockedAddressReason(literal) : blockedHostnameReason(url.hostname);
    if (reason) return at("blocked_ssrf", `xmlUrl ${url.host} refused: ${reason}`);
  }
  return { url };
}

/** Key for "the same feed": lib/canonical's form (tracking parameters and trailing / dropped). */
function sameFeedKey(url: string): string | null {
  try {
    return canonicalizeUrl(url);
  } catch {
    return null;
  }
}

/**
 * The id a feed gets: its host (readable on the Sources page) and 10 hex digits of the hash of
 * its canonical URL, so the same feed imported twice, or by two imports at once, gets the same
 * id and the second insert finds it taken. 40 bits: a collision within one host needs about a
 * million feeds of that host.
 */
export function importedSourceId(canonicalUrl: string, url: URL): string {
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/[^A-Za-z0-9._:-]/g, "-");
  const hash = createHash("sha256").update(canonicalUrl, "utf8").digest("hex").slice(0, 10);
  return `${host.replace(/^[^A-Za-z0-9]+/, "").slice(0, 180) || "feed"}-${hash}`;
}

/** title, else text, else the site's or the feed's host (as Miniflux and NewsBlur fall back). */
function nameOf(feed: OpmlFeed, url: URL): string {
  const fallback = () => {
    try {
      return new URL(feed.htmlUrl ?? "").host || url.host;
    } catch {
      return url.host;
    }
  };
  const chosen = [feed.title, feed.text].find((n) => n && textProblem(n) === null) ?? fallback();
  const chars = [...chosen];
  // Cut by code points, so a Bangla name never ends in half a surrogate pair.
  return chars.length > MAX_NAME_LENGTH
    ? `${chars.slice(0, MAX_NAME_LENGTH - 1).join("")}…`
    : chosen;
}

const ORIGIN_WORDS: Record<string, string> = {
  file: "from the sources file",
  dashboard: "added in the dashboard",
};

export function planImport(
  doc: OpmlDocument,
  existing: ExistingSource[],
  { allowPrivate = false }: PlanOptions = {},
): ImportPlan {
  const problems: OpmlProblem[] = [...doc.problems];
  const add: PlannedSource[] = [];
  const existingByKey = new Map<string, ExistingSource>();
  for (const s of existing) {
    const key = s.url ? sameFeedKey(s.url) : null;
    if (key && !existingByKey.has(key)) existingByKey.set(key, s);
  }
  const existingIds = new Map(existing.map((s) => [s.id, s]));
  const seen = new Map<string, OpmlFeed>();
  const where = (f: OpmlFeed) => (f.folder.length ? ` in ${f.folder.join(" / ")}` : "");

  for (const feed of doc.feeds) {
    const checked = checkUrl(feed, allowPrivate);
    if ("problem" in checked) {
      problems.push(checked.problem);
      continue;
    }
    const { url } = checked;
    const key = sameFeedKey(url.href) ?? url.href;
    const first = seen.get(key);
    if (first) {
      problems.push(
        problem(
          feed.line,
          "duplicate_in_file",
          `${url.href}${where(feed)} is the same feed as line ${first.line}${where(first)}`,
          { url: feed.xmlUrl },
        ),
      );
      continue;
    }
    seen.set(key, feed);
    const id = importedSourceId(key, url);
    const already = existingByKey.get(key) ?? existingIds.get(id);
    if (already) {
      problems.push(
        problem(
          feed.line,
          "already_a_source",
          `${url.href} is already source "${already.id}" (${ORIGIN_WORDS[already.configOrigin] ?? already.configOrigin})`,
          { url: feed.xmlUrl, existingId: already.id },
        ),
      );
      continue;
    }
    if (add.length >= MAX_IMPORTED_SOURCES) {
      problems.push(
        problem(
          feed.line,
          "too_many",
          `one import adds at most ${MAX_IMPORTED_SOURCES} sources; ${url.href} and the feeds after it were not planned`,
          { url: feed.xmlUrl },
        ),
      );
      break;
    }
    // The enclosing outlines are the folder; one too long to store is the file's mistake, said
    // by line, rather than a feed filed somewhere it was not.
    const folder = folderPath(feed.folder);
    const badFolder = folder === null ? null : folderProblem(folder);
    if (badFolder) {
      problems.push(
        problem(feed.line, "invalid_folder", `${url.href}: the folder path it is in ${badFolder}`, {
          url: feed.xmlUrl,
        }),
      );
      continue;
    }
    // The sources file's own schema gives the defaults (poll every 300 s, collector A, enabled)
    // and has the last word on what a source may be.
    const parsed = sourceSchema.safeParse({
      id,
      name: nameOf(feed, url),
      kind: "feed",
      url: url.href,
      allowPrivate,
      ...(folder === null ? {} : { folder }),
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push(
        problem(
          feed.line,
          "invalid_url",
          `${url.href} cannot be a source: ${issue?.path.join(".")}: ${issue?.message}`,
          { url: feed.xmlUrl },
        ),
      );
      continue;
    }
    const config = parsed.data;
    add.push({
      line: feed.line,
      id,
      name: config.name,
      url: config.url,
      folder: feed.folder,
      categories: feed.categories,
      config,
    });
  }

  problems.sort(byLine);
  return {
    readable: doc.readable,
    opml: { version: doc.version, title: doc.title },
    add,
    problems,
    errors: problems.filter((p) => p.severity === "error").length,
  };
}
