import type { Metadata } from "next";
import { headers } from "next/headers";
import { CATEGORIES } from "@/lib/extract/types";
import { ReadModelKeyError } from "@/lib/readmodel/keys";
import { publicRateLimitFor } from "@/lib/readmodel/rateLimit";
import { readModel, recordRequest } from "@/lib/readmodel/serve";
import type { ListPage } from "@/lib/readmodel/types";
import { NewsList } from "./NewsList";
import styles from "./news.module.css";

export const metadata: Metadata = { title: "News · wirewatch" };

// Rendered per request like every page here (the root layout's CSP nonce, docs/decisions/009),
// which costs little: the stories come from the read model's ready payload in this process
// (Redis or memory), never from a query, and the list is the same bytes /api/news sends, so
// this page and the API can never disagree. With no script of its own it works with JavaScript
// off: filters and pages are plain links.
export const dynamic = "force-dynamic";

type Params = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (typeof v === "string" && v ? v : undefined);

export default async function NewsPage({ searchParams }: { searchParams: Promise<Params> }) {
  const startedAt = performance.now();
  const params = await searchParams;
  const filter = { category: one(params.category), lang: one(params.lang) };
  const cursor = one(params.cursor);
  const shell = (body: React.ReactNode) => (
    <main className={styles.page}>
      <h1>News</h1>
      <p className="lede">
        The stories the wire is carrying now, one per story however many outlets cover it, ranked by
        recency, coverage and breaking news. Also as JSON at <a href="/api/news">/api/news</a>.
      </p>
      <NewsFilters category={filter.category} lang={filter.lang} />
      {body}
    </main>
  );

  if (publicRateLimitFor(await headers()) !== null) {
    recordRequest("page", "rate_limited", startedAt);
    return shell(<p className={styles.notice}>Too many requests: try again in a minute.</p>);
  }
  let result: Awaited<ReturnType<ReturnType<typeof readModel>["getList"]>>;
  try {
    result = await readModel().getList(filter, 20, cursor);
  } catch (err) {
    if (!(err instanceof ReadModelKeyError)) throw err;
    return shell(
      <p className={styles.notice}>
        {err.code === "bad_cursor" ? "This page link is not valid." : "No such filter."}{" "}
        <a href="/news">Start from the first page</a>.
      </p>,
    );
  }
  recordRequest("page", result.outcome, startedAt);
  if (result.payload === null) {
    return shell(
      <p className={styles.notice}>
        {result.code === "cursor_expired"
          ? "This page belongs to an older edition of the news."
          : "The news is not available right now."}{" "}
        <a href="/news">Start from the first page</a>.
      </p>,
    );
  }
  const page = JSON.parse(result.payload.body.toString("utf8")) as ListPage;
  return shell(
    <NewsList
      page={page}
      ageSeconds={Math.floor(result.ageMs / 1000)}
      stale={result.outcome === "stale"}
      nextHref={page.nextCursor ? href(filter, page.nextCursor) : null}
      firstHref={cursor ? href(filter) : null}
    />,
  );
}

function href(filter: { category?: string; lang?: string }, cursor?: string): string {
  const query = new URLSearchParams();
  if (filter.category) query.set("category", filter.category);
  if (filter.lang) query.set("lang", filter.lang);
  if (cursor) query.set("cursor", cursor);
  const text = query.toString();
  return text ? `/news?${text}` : "/news";
}

const LANGUAGES: { code?: string; label: string; lang?: string }[] = [
  { label: "All languages" },
  { code: "en", label: "English", lang: "en" },
  { code: "bn", label: "বাংলা", lang: "bn" },
];

function NewsFilters({ category, lang }: { category?: string; lang?: string }) {
  return (
    <nav className={styles.filters} aria-label="Filters">
      <ul aria-label="Language">
        {LANGUAGES.map((l) => (
          <li key={l.label}>
            <a
              href={href({ category, lang: l.code })}
              lang={l.lang}
              aria-current={lang === l.code ? "page" : undefined}
            >
              {l.label}
            </a>
          </li>
        ))}
      </ul>
      <ul aria-label="Category">
        <li>
          <a href={href({ lang })} aria-current={!category ? "page" : undefined}>
            All topics
          </a>
        </li>
        {CATEGORIES.map((c) => (
          <li key={c}>
            <a
              href={href({ category: c, lang })}
              aria-current={category === c ? "page" : undefined}
            >
              {c}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
