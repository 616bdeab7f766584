"use client";

import Link from "next/link";
import s from "@/components/dashboard.module.css";
import { ApiError } from "@/components/hooks/api";
import { useItem } from "@/components/hooks/useItem";
import { Pager, usePages } from "@/components/ui/Pager";
import { when } from "@/lib/dashboard/format";
import { ItemCluster } from "./ItemCluster";
import { ItemExtraction } from "./ItemExtraction";

/** One item's provenance: its current row, the versions, and every observation of it. */
export function ItemView({ entryKey }: { entryKey: string }) {
  const pages = usePages();
  const { data, error, isLoading } = useItem(entryKey, pages.cursor);

  if (isLoading) return <p>Loading…</p>;
  if (error) {
    return (
      <>
        <h1>Item</h1>
        <p className={s.error} role="alert">
          {error instanceof ApiError && error.status === 404
            ? "No item with this key."
            : (error as Error).message}
        </p>
        <Link href="/items">← Items</Link>
      </>
    );
  }
  if (!data) return null;
  const { item, observations } = data;
  // The API pages the timeline 500 observations at a time.
  const offset = pages.depth * 500;

  return (
    <>
      <p>
        <Link href="/items">← Items</Link>
      </p>
      <h1 className={s.headline} data-testid="item-title">
        {item.title ?? <span className="untitled">(no title)</span>}
      </h1>
      <p className="lede">
        <span className={`badge ${item.state}`}>{item.state}</span>{" "}
        <span className={`badge ${item.quality}`}>
          {item.quality === "fallback" ? "fallback-derived" : "authoritative"}
        </span>{" "}
        v{item.version} · {item.sourceName ?? item.sourceId} · {data.observationCount} observation
        {data.observationCount === 1 ? "" : "s"}, one current row
      </p>

      <section className={s.card} aria-label="Current row">
        <h2>Current row</h2>
        <dl>
          <dt>Entry key</dt>
          <dd className={s.mono}>{item.entryKey}</dd>
          <dt>Canonical id</dt>
          <dd className={s.mono}>{item.canonicalId}</dd>
          <dt>Link</dt>
          <dd>
            {item.link ? (
              <a href={item.link} rel="noopener noreferrer nofollow" target="_blank">
                {item.link}
              </a>
            ) : (
              "—"
            )}
          </dd>
          <dt>Summary</dt>
          <dd>{item.summary ?? "—"}</dd>
          <dt>Category</dt>
          <dd>{item.category ?? "—"}</dd>
          <dt>Breaking</dt>
          <dd>{item.breaking ? "yes" : "no"}</dd>
          <dt>Instruments</dt>
          <dd>{item.instruments.length ? item.instruments.join(", ") : "—"}</dd>
          <dt>Language</dt>
          <dd>{item.language ?? "—"}</dd>
          <dt>Published</dt>
          <dd>{when(item.publishedAt, "ms")}</dd>
          <dt>Version</dt>
          <dd>
            v{item.version} (last writer result: {item.lastResult}; source revision{" "}
            {item.revision ?? "—"})
          </dd>
          <dt>First seen</dt>
          <dd>
            {when(item.firstSeenAt, "ms")} from {item.firstSource}, collector {item.firstCollector}
          </dd>
          <dt>Updated</dt>
          <dd>{when(item.updatedAt, "ms")}</dd>
          <dt>Tombstone</dt>
          <dd data-testid="tombstone">
            {item.deletedAt ? `retracted ${when(item.deletedAt, "ms")} (row kept)` : "none"}
          </dd>
          <dt>Duplicate of</dt>
          <dd>
            {item.duplicateOf ? (
              <Link href={`/items/${item.duplicateOf}`}>
                {item.duplicateOf.slice(0, 12)}… ({item.dedupStage ?? "?"})
              </Link>
            ) : (
              "—"
            )}
          </dd>
        </dl>
      </section>

      <ItemCluster dedup={data.dedup} version={item.version} />

      <ItemExtraction e={data.extraction} isDuplicate={item.duplicateOf !== null} />

      <h2>Versions</h2>
      {data.versions.length === 0 ? (
        <p className="lede">No version-making delivery on this page of the timeline.</p>
      ) : (
        <table className={s.table} aria-label="Versions">
          <thead>
            <tr>
              <th>Version</th>
              <th>Made by</th>
              <th>When</th>
              <th>Title it carried</th>
            </tr>
          </thead>
          <tbody>
            {data.versions.map((v) => (
              <tr key={`${v.version}-${v.at}`}>
                <td className={s.num}>v{v.version}</td>
                <td>
                  <span className={s.result} data-result={v.result}>
                    {v.result}
                  </span>
                </td>
                <td className={s.nowrap}>{when(v.at, "ms")}</td>
                <td className={s.title}>{v.title ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Observations</h2>
      <p className="lede">
        Every delivery in recorded order, duplicates included, and what the writer did with it.
        Identical repeats from the same collector and origin are counted on the row they repeat.
      </p>
      <table className={s.table} aria-label="Observations">
        <thead>
          <tr>
            <th>#</th>
            <th>Observed</th>
            <th>Source</th>
            <th>Collector</th>
            <th>Origin</th>
            <th>Kind</th>
            <th>Title carried</th>
            <th>Writer result</th>
            <th>Reason</th>
            <th>Version after</th>
          </tr>
        </thead>
        <tbody>
          {observations.map((o, i) => (
            <tr key={o.id} data-event-id={o.id}>
              <td className={s.num}>{offset + i + 1}</td>
              <td className={s.nowrap}>
                {when(o.observedAt, "ms")}
                {Math.abs(Date.parse(o.receivedAt) - Date.parse(o.observedAt)) >= 1000 ? (
                  <div className={s.muted}>received {when(o.receivedAt, "ms")}</div>
                ) : null}
              </td>
              <td className={s.nowrap}>{o.sourceId}</td>
              <td>{o.collector}</td>
              <td>{o.origin}</td>
              <td>{o.kind}</td>
              <td className={s.title}>
                {o.title ?? "—"}
                <details>
                  <summary className={s.muted}>payload</summary>
                  <pre className={s.pre}>{JSON.stringify(o.payload, null, 2)}</pre>
                </details>
              </td>
              <td>
                <span className={s.result} data-result={o.result}>
                  {o.result}
                </span>
                {o.sightings > 1 ? (
                  <div className={s.muted} data-testid="sightings">
                    seen {o.sightings} times, last at {when(o.lastSeenAt ?? o.observedAt, "ms")}{" "}
                    (the {o.sightings - 1} repeats changed nothing)
                  </div>
                ) : null}
              </td>
              <td>{o.reason ?? "—"}</td>
              <td className={s.num}>{o.versionAfter === null ? "—" : `v${o.versionAfter}`}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager pages={pages} next={data.nextAfter} backLabel="← Earlier" nextLabel="Later →" />
    </>
  );
}
