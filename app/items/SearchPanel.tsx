"use client";

import Link from "next/link";
import { type FormEvent, useState } from "react";
import s from "@/components/dashboard.module.css";
import { useSearch } from "@/components/hooks/useSearch";
import { Pager, usePages } from "@/components/ui/Pager";
import { when } from "@/lib/dashboard/format";
import { reasonChips } from "@/lib/search/reasons";
import type { SearchAnswer } from "@/lib/search/search";
import css from "./search.module.css";

export interface SearchFields {
  q: string;
  lang: string;
  source: string;
}

/**
 * Story search: words and meaning (GET /api/search), one hit per story with its outlets and why
 * it matched. The form is a plain GET form to /items?search=…, so a search is a link; with
 * JavaScript it is answered in place.
 */
export function SearchPanel({ initial }: { initial: SearchFields }) {
  const [draft, setDraft] = useState(initial);
  const [asked, setAsked] = useState(initial);
  const pages = usePages();
  const { data, error, isFetching } = useSearch({
    q: asked.q,
    lang: asked.lang,
    source: asked.source,
    cursor: pages.cursor,
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const next = { q: draft.q.trim(), lang: draft.lang, source: draft.source.trim() };
    setAsked(next);
    pages.reset();
    const url = new URL(window.location.href);
    for (const [name, value] of [
      ["search", next.q],
      ["lang", next.lang],
      ["source", next.source],
    ] as const) {
      if (value) url.searchParams.set(name, value);
      else url.searchParams.delete(name);
    }
    window.history.replaceState(null, "", url);
  };

  return (
    <section aria-labelledby="story-search" className={css.panel}>
      <h2 id="story-search">Search stories</h2>
      <search aria-label="Search stories">
        <form
          data-testid="search-box"
          className={s.search}
          action="/items"
          method="get"
          onSubmit={submit}
        >
          <label htmlFor="story-search-q">
            Words or meaning
            <input
              id="story-search-q"
              name="search"
              type="search"
              value={draft.q}
              maxLength={500}
              onChange={(e) => setDraft({ ...draft, q: e.target.value })}
              placeholder="e.g. dock workers walk out, or বন্দরে ধর্মঘট"
            />
          </label>
          <label htmlFor="story-search-lang">
            Language
            <select
              id="story-search-lang"
              name="lang"
              value={draft.lang}
              onChange={(e) => setDraft({ ...draft, lang: e.target.value })}
              className={css.select}
            >
              <option value="">any</option>
              <option value="en">English</option>
              <option value="bn">Bangla</option>
            </select>
          </label>
          <label htmlFor="story-search-source">
            From source
            <input
              id="story-search-source"
              name="source"
              value={draft.source}
              onChange={(e) => setDraft({ ...draft, source: e.target.value })}
              placeholder="any"
              className={css.narrow}
            />
          </label>
          <button type="submit" className={s.button}>
            Search
          </button>
          <span className={s.muted} aria-live="polite">
            {isFetching ? "searching…" : ""}
          </span>
        </form>
      </search>
      {error ? <p className={s.error}>{(error as Error).message}</p> : null}
      {asked.q && data ? <Answer answer={data} pages={pages} /> : null}
    </section>
  );
}

function Answer({ answer, pages }: { answer: SearchAnswer; pages: ReturnType<typeof usePages> }) {
  return (
    <>
      <SearchedWith answer={answer} />
      {answer.notices.length > 0 ? (
        <ul className={css.notices} data-testid="search-notices">
          {answer.notices.map((n) => (
            <li key={n.code} data-code={n.code}>
              {n.message}
            </li>
          ))}
        </ul>
      ) : null}
      <ol className={css.hits} data-testid="search-results" aria-label="Search results">
        {answer.hits.map((hit) => (
          <li key={hit.entryKey} data-testid="search-hit" data-entry-key={hit.entryKey}>
            <Link
              href={`/items/${hit.entryKey}`}
              className={css.hitTitle}
              lang={hit.lang ?? undefined}
            >
              {hit.title ?? <span className="untitled">(no title)</span>}
            </Link>
            <div className={css.meta}>
              {hit.sourceName ?? hit.sourceId} · {when(hit.publishedAt ?? hit.firstSeenAt)}
              {hit.outlets.length > 1 ? (
                <>
                  {" "}
                  · {hit.members} items from {hit.outlets.length} outlets:{" "}
                  <span data-testid="search-outlets">
                    {hit.outlets.map((o) => o.name ?? o.sourceId).join(", ")}
                  </span>
                </>
              ) : null}
            </div>
            {hit.summary ? (
              <p className={css.summary} lang={hit.lang ?? undefined}>
                {hit.summary}
              </p>
            ) : null}
            <div className={css.reasons}>
              {reasonChips(hit.reasons).map((chip) => (
                <span
                  key={chip.kind}
                  data-testid="search-reason"
                  data-kind={chip.kind}
                  className={`${css.chip} ${css[chip.kind] ?? ""}`}
                  title={chip.explanation}
                >
                  {chip.label}
                </span>
              ))}
            </div>
          </li>
        ))}
      </ol>
      {answer.hits.length === 0 ? <p className="empty">No stories match.</p> : null}
      {pages.depth > 0 || answer.nextCursor ? (
        <Pager pages={pages} next={answer.nextCursor} firstLabel="← First" nextLabel="More →" />
      ) : null}
    </>
  );
}

/** What answered: the model (or none: keyword only) and where vectors are searched. */
function SearchedWith({ answer }: { answer: SearchAnswer }) {
  const m = answer.model;
  const limits: string[] = [];
  if (m && !m.languages.includes("bn")) limits.push("English only");
  if (m && !m.crossLingual) limits.push("no Bangla ↔ English");
  return (
    <p className={css.searchedWith} data-testid="search-model">
      {m ? (
        <>
          Matched by words and by{" "}
          {m.kind === "meaning" ? (
            <>
              meaning: <code>{m.id}</code>
            </>
          ) : (
            <>
              lexical vectors (shared spelling, not meaning): <code>{m.id}</code>
            </>
          )}
          {limits.length > 0 ? <span className={s.muted}> ({limits.join(", ")})</span> : null}
        </>
      ) : (
        <>Keyword search only (full text): nothing here is matched by meaning.</>
      )}{" "}
      · vectors:{" "}
      <span data-testid="search-backend">
        {answer.vectorBackend === "pgvector"
          ? `pgvector ${answer.pgvectorVersion ?? ""} (HNSW)`.replace("  ", " ")
          : "portable (sign-code scan, then exact cosine)"}
      </span>{" "}
      · {Math.round(answer.timings.totalMs)} ms
    </p>
  );
}
