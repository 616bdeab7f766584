"use client";

import Link from "next/link";
import s from "@/components/dashboard.module.css";
import type { CostsOverview, SourceCosts, TopItem } from "@/lib/dashboard/costs";
import { percent, usd } from "@/lib/dashboard/format";
import own from "./costs.module.css";

const n = (v: number) => v.toLocaleString("en-GB");

/** Per source: spend against what it bought. */
export function SourcesTable({ rows, windowLabel }: { rows: SourceCosts[]; windowLabel: string }) {
  return (
    <table
      className={`${s.table} ${own.cards}`}
      data-testid="costs-sources"
      aria-label="Spend by source"
    >
      <thead>
        <tr>
          <th>Source</th>
          <th className={s.num}>Spend</th>
          <th className={s.num}>Unique stories</th>
          <th className={s.num}>Per unique story</th>
          <th className={s.num}>Duplicates</th>
          <th className={s.num}>Failed calls</th>
          <th className={s.num}>Tokens in / out</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={7} className={s.muted}>
              No source had items or extraction calls in the last {windowLabel}.
            </td>
          </tr>
        ) : (
          rows.map((r) => (
            <tr key={r.sourceId} data-testid="costs-source-row" data-source={r.sourceId}>
              <td data-label="Source" className={s.title}>
                <Link href={`/sources/${encodeURIComponent(r.sourceId)}`}>
                  {r.sourceName ?? r.sourceId}
                </Link>
              </td>
              <td data-label="Spend" className={s.num} data-testid="source-spend">
                <strong>{usd(r.costUsd)}</strong>
              </td>
              <td data-label="Unique stories" className={s.num}>
                {n(r.uniqueStories)}
              </td>
              <td data-label="Per unique story" className={s.num}>
                {r.costPerUniqueStory === null
                  ? r.costUsd > 0
                    ? "no unique story"
                    : "–"
                  : usd(r.costPerUniqueStory)}
              </td>
              <td data-label="Duplicates" className={s.num}>
                {n(r.duplicates)}
                <span className={s.muted}> ({percent(r.duplicateRate)})</span>
              </td>
              <td data-label="Failed calls" className={s.num}>
                <span className={r.failed > 0 ? own.bad : undefined}>{n(r.failed)}</span>
                <span className={s.muted}>
                  {" "}
                  of {n(r.attempts)} ({percent(r.errorRate)})
                </span>
              </td>
              <td data-label="Tokens in / out" className={s.num}>
                {n(r.tokensIn)} / {n(r.tokensOut)}
              </td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

const OUTCOME_TEXT: Record<string, string> = {
  ok: "valid",
  rate_limited: "rate limited (429)",
  timeout: "timed out",
  provider_error: "provider error (5xx)",
  breaker_open: "held back: breaker open",
  skipped: "held back: Retry-After",
  budget_exhausted: "held back: budget spent",
  malformed: "malformed (not JSON)",
  schema_violation: "violated the schema",
  unavailable: "unavailable (401/403/404)",
  bad_input: "bad input",
};

/** Calls by provider and outcome, and extractions by the provider that made them. */
export function CallsTables({ o, windowLabel }: { o: CostsOverview; windowLabel: string }) {
  const c = o.calls;
  return (
    <div className={own.pair}>
      <table className={`${s.table} ${own.cards}`} aria-label="Calls by outcome">
        <thead>
          <tr>
            <th>Provider</th>
            <th>Outcome</th>
            <th className={s.num}>Calls</th>
            <th className={s.num}>Spend</th>
          </tr>
        </thead>
        <tbody>
          {c.byOutcome.length === 0 ? (
            <tr>
              <td colSpan={4} className={s.muted}>
                No extraction call in the last {windowLabel}.
              </td>
            </tr>
          ) : (
            c.byOutcome.map((r) => (
              <tr key={`${r.provider}:${r.outcome}`} data-outcome={r.outcome}>
                <td data-label="Provider">{r.provider}</td>
                <td data-label="Outcome">
                  <span className={`badge ${r.outcome === "ok" ? "live" : "retracted"}`}>
                    {r.outcome}
                  </span>{" "}
                  <span className={s.muted}>{OUTCOME_TEXT[r.outcome] ?? ""}</span>
                </td>
                <td data-label="Calls" className={s.num}>
                  {n(r.calls)}
                </td>
                <td data-label="Spend" className={s.num}>
                  {usd(r.costUsd)}
                </td>
              </tr>
            ))
          )}
        </tbody>
      </table>
      <div>
        <table className={`${s.table} ${own.cards}`} aria-label="Extractions by provider">
          <thead>
            <tr>
              <th>Answered by</th>
              <th className={s.num}>Extractions</th>
              <th className={s.num}>Fell over</th>
            </tr>
          </thead>
          <tbody>
            {c.byProvider.length === 0 ? (
              <tr>
                <td colSpan={3} className={s.muted}>
                  No extraction stored in the last {windowLabel}.
                </td>
              </tr>
            ) : (
              c.byProvider.map((r) => (
                <tr key={`${r.provider}/${r.model}`}>
                  <td data-label="Answered by">
                    {r.provider} · <code>{r.model}</code>
                  </td>
                  <td data-label="Extractions" className={s.num}>
                    {n(r.extractions)}
                  </td>
                  <td data-label="Fell over" className={s.num}>
                    {n(r.fallovers)}
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
        <p className={s.muted}>
          {n(c.corrections)} correction retr{c.corrections === 1 ? "y" : "ies"} fed the validation
          errors back; {n(c.correctionsOk)} of them came back valid. A fallover is an extraction
          answered by a provider after the first of the chain.
          {o.coverage.extractor ? (
            <>
              {" "}
              Current chain: <code className={own.chain}>{o.coverage.extractor}</code>.
            </>
          ) : null}
        </p>
      </div>
    </div>
  );
}

/** The items whose extraction cost the most, linking to the item page. */
export function TopItems({ rows }: { rows: TopItem[] }) {
  return (
    <table
      className={`${s.table} ${own.cards}`}
      data-testid="costs-top-items"
      aria-label="Most expensive items"
    >
      <thead>
        <tr>
          <th>Item</th>
          <th>Source</th>
          <th className={s.num}>Spend</th>
          <th className={s.num}>Calls</th>
          <th className={s.num}>Tokens in / out</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={5} className={s.muted}>
              No item cost anything in this window.
            </td>
          </tr>
        ) : (
          rows.map((r) => (
            <tr key={r.entryKey} data-entry-key={r.entryKey}>
              <td data-label="Item" className={s.title}>
                <Link href={`/items/${r.entryKey}`}>
                  {r.title ?? <span className="untitled">(no title)</span>}
                </Link>
              </td>
              <td data-label="Source">{r.sourceName ?? r.sourceId ?? "–"}</td>
              <td data-label="Spend" className={s.num}>
                <strong>{usd(r.costUsd)}</strong>
              </td>
              <td data-label="Calls" className={s.num}>
                {n(r.calls)}
              </td>
              <td data-label="Tokens in / out" className={s.num}>
                {n(r.tokensIn)} / {n(r.tokensOut)}
              </td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}
