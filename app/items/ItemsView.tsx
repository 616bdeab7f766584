"use client";

import Link from "next/link";
import { useEffect, useState } from "react";
import s from "@/components/dashboard.module.css";
import { useItems } from "@/components/hooks/useItems";
import { Pager, usePages } from "@/components/ui/Pager";
import { when } from "@/lib/dashboard/format";

/** Waits for typing to pause: one request per pause, not per keystroke. */
function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

export function ItemsView() {
  const [q, setQ] = useState("");
  const [source, setSource] = useState("");
  const pages = usePages();
  const params = { q: useDebounced(q.trim(), 300), source: useDebounced(source.trim(), 300) };
  const { data, error, isFetching } = useItems({ ...params, cursor: pages.cursor });

  // A new search starts at the newest rows again.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the search changes
  useEffect(() => pages.reset(), [params.q, params.source]);

  return (
    <>
      <form className={s.search} onSubmit={(e) => e.preventDefault()}>
        <label>
          Headline contains
          <input
            type="search"
            value={q}
            onChange={(e) => setQ(e.target.value)}
            placeholder="e.g. port strike, or an entry key"
            aria-label="Headline contains"
          />
        </label>
        <label>
          Source id
          <input
            value={source}
            onChange={(e) => setSource(e.target.value)}
            placeholder="e.g. wire"
            aria-label="Source id"
          />
        </label>
        <span className={s.muted} aria-live="polite">
          {isFetching ? "searching…" : ""}
        </span>
      </form>
      {error ? <p className={s.error}>{(error as Error).message}</p> : null}
      <table className={s.table} aria-label="Items">
        <thead>
          <tr>
            <th>Headline</th>
            <th>Source</th>
            <th>Version</th>
            <th>State</th>
            <th>Origin</th>
            <th>Last result</th>
            <th>Updated</th>
          </tr>
        </thead>
        <tbody>
          {data?.items.map((item) => (
            <tr
              key={item.entryKey}
              data-entry-key={item.entryKey}
              className={item.state === "retracted" ? s.retracted : undefined}
            >
              <td className={s.title}>
                <Link href={`/items/${item.entryKey}`}>
                  {item.title ?? <span className="untitled">(no title)</span>}
                </Link>
              </td>
              <td className={s.nowrap}>{item.sourceName ?? item.sourceId}</td>
              <td className={s.num}>v{item.version}</td>
              <td>
                <span className={`badge ${item.state}`}>{item.state}</span>
              </td>
              <td>
                <span className={`badge ${item.quality}`}>
                  {item.quality === "fallback" ? "fallback-derived" : "authoritative"}
                </span>
              </td>
              <td>{item.lastResult}</td>
              <td className={s.nowrap}>{when(item.updatedAt)}</td>
            </tr>
          ))}
          {data && data.items.length === 0 ? (
            <tr>
              <td colSpan={7} className="empty">
                No items {params.q || params.source ? "match among those searched" : "yet"}.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <Pager
        pages={pages}
        next={data?.nextCursor}
        backLabel="← Newer"
        nextLabel={data?.windowEnded ? "Search older →" : "Older →"}
      >
        {data?.windowEnded ? (
          <span className={s.muted}>
            Searched {data.scanned.toLocaleString("en")} rows (at most{" "}
            {data.scanWindow.toLocaleString("en")} per request); older rows are searched on demand.
          </span>
        ) : null}
      </Pager>
    </>
  );
}
