"use client";

import { useState } from "react";
import s from "@/components/dashboard.module.css";
import { useCosts } from "@/components/hooks/useCosts";
import type { BudgetState, CostsOverview, CostWindow } from "@/lib/dashboard/costs";
import { percent, relative, usd, utc } from "@/lib/dashboard/format";
import { CallsTables, SourcesTable, TopItems } from "./CostsTables";
import own from "./costs.module.css";
import { SpendPanel } from "./SpendPanel";

const WINDOWS: { value: CostWindow; label: string }[] = [
  { value: "24h", label: "24 hours" },
  { value: "7d", label: "7 days" },
  { value: "30d", label: "30 days" },
];

export function CostsView() {
  const [span, setSpan] = useState<CostWindow>("7d");
  const { data, error } = useCosts({ window: span });
  return (
    <>
      {error ? (
        <p className={s.error} role="alert">
          Costs unavailable: {error.message}
        </p>
      ) : null}
      {data ? <Costs o={data} span={span} setSpan={setSpan} /> : !error ? <p>Loading…</p> : null}
    </>
  );
}

function Costs({
  o,
  span,
  setSpan,
}: {
  o: CostsOverview;
  span: CostWindow;
  setSpan: (w: CostWindow) => void;
}) {
  const label = WINDOWS.find((w) => w.value === o.window)?.label ?? o.window;
  return (
    <>
      {o.budgets
        .filter((b) => b.exhausted)
        .map((b) => (
          <BudgetBanner key={b.provider} b={b} now={o.now} />
        ))}
      <Tiles o={o} windowLabel={label} />
      <Forecast o={o} />
      <SpendPanel spend={o.spend} />
      <div className={own.windowBar}>
        <h2>What each source&apos;s spend buys</h2>
        <fieldset className={own.windows}>
          <legend className={own.windowsLegend}>Over the last</legend>
          {WINDOWS.map((w) => (
            <button
              key={w.value}
              type="button"
              className={s.button}
              aria-pressed={span === w.value}
              onClick={() => setSpan(w.value)}
            >
              {w.label}
            </button>
          ))}
        </fieldset>
      </div>
      <p className={s.muted}>
        Is this source worth crawling? Its extraction spend in the last {label} against the stories
        it brought that no other source had (unique), the ones dedup linked to another source&apos;s
        (duplicates: never extracted, so free, but not news either), and how often its items&apos;
        calls failed. Calls held back (budget, breaker, Retry-After) are not counted as calls.
      </p>
      <SourcesTable rows={o.sources} windowLabel={label} />
      <h2>Calls by outcome</h2>
      <CallsTables o={o} windowLabel={label} />
      <h2>Most expensive items</h2>
      <p className={s.muted}>
        Every attempt counted (corrections and failed providers included), over the last {label}.
      </p>
      <TopItems rows={o.topItems} />
      {new Date(o.now).getTime() - new Date(o.countedAt).getTime() > 5_000 ? (
        <p className={s.muted}>
          Figures counted {relative(o.countedAt, o.now)} (recounted at most once a minute on a large
          ledger); the budgets are read on every refresh.
        </p>
      ) : null}
    </>
  );
}

function BudgetBanner({ b, now }: { b: BudgetState; now: string }) {
  return (
    <p
      className={own.budgetBanner}
      role="alert"
      data-testid="budget-banner"
      data-provider={b.provider}
    >
      The <strong>{b.provider}</strong> provider is stopped at its daily budget: {usd(b.spentUsd)}{" "}
      spent of {usd(b.budgetUsd)} today
      {b.skippedToday > 0
        ? `, ${b.skippedToday.toLocaleString("en-GB")} attempt${b.skippedToday === 1 ? "" : "s"} skipped (the last ${relative(b.lastSkippedAt, now)})`
        : ""}
      . The providers after it in the chain answer until the budget resets at midnight UTC (
      <span title={utc(b.resetsAt)}>{relative(b.resetsAt, now)}</span>).
    </p>
  );
}

function Tiles({ o, windowLabel }: { o: CostsOverview; windowLabel: string }) {
  const f = o.forecast;
  const c = o.calls;
  return (
    <div className={own.tiles}>
      <div className={own.tile} data-testid="costs-today">
        <strong>{usd(o.today.costUsd)}</strong>
        <span>
          spent on extraction today (UTC), {o.today.calls.toLocaleString("en-GB")} ledger rows
        </span>
      </div>
      <div className={own.tile}>
        <strong>{usd(f.monthToDateUsd)}</strong>
        <span>spent this month so far ({monthName(f.month)})</span>
      </div>
      <div className={own.tile} data-testid="costs-forecast-tile">
        <strong className={f.share !== null && f.share > 1 ? own.bad : undefined}>
          {usd(f.forecastUsd)}
        </strong>
        <span>
          forecast for {monthName(f.month)}
          {f.budgetUsd !== null ? `, ${percent(f.share)} of the budget` : ", no budget set"}
        </span>
      </div>
      <div className={own.tile} data-testid="costs-coverage">
        <strong>{percent(o.coverage.ratio)}</strong>
        <span>
          {o.coverage.extractor === null
            ? `of ${o.coverage.canonical.toLocaleString("en-GB")} canonical items extracted: nothing extracted yet`
            : `${o.coverage.done.toLocaleString("en-GB")} of ${o.coverage.canonical.toLocaleString("en-GB")} canonical items extracted by the current chain`}
        </span>
      </div>
      <div className={own.tile}>
        <strong className={c.failed > 0 ? own.bad : undefined}>{percent(rate(c))}</strong>
        <span>
          of {c.attempts.toLocaleString("en-GB")} calls failed in {windowLabel};{" "}
          {c.corrections.toLocaleString("en-GB")} correction retries ({c.correctionsOk} valid),{" "}
          {c.fallovers.toLocaleString("en-GB")} of {c.extractions.toLocaleString("en-GB")}{" "}
          extractions fell over
        </span>
      </div>
    </div>
  );
}

const rate = (c: CostsOverview["calls"]) => (c.attempts > 0 ? c.failed / c.attempts : null);

function Forecast({ o }: { o: CostsOverview }) {
  const f = o.forecast;
  // The bar's scale: the larger of the forecast and the budget, so both fit.
  const scale = Math.max(f.forecastUsd, f.budgetUsd ?? 0) || 1;
  const width = (v: number) => `${Math.min(100, (v / scale) * 100)}%`;
  const over = f.budgetUsd !== null && f.forecastUsd > f.budgetUsd;
  return (
    <section className={s.card} aria-labelledby="forecast-heading" data-testid="costs-forecast">
      <h2 id="forecast-heading" className={own.cardHeading}>
        Forecast for {monthName(f.month)}
      </h2>
      <div
        className={own.bar}
        role="img"
        aria-label={`Spent ${usd(f.monthToDateUsd)}, forecast ${usd(f.forecastUsd)}${f.budgetUsd !== null ? `, budget ${usd(f.budgetUsd)}` : ""}`}
      >
        <span className={own.barSpent} style={{ width: width(f.monthToDateUsd) }} />
        <span
          className={`${own.barForecast} ${over ? own.barOver : ""}`}
          style={{ width: width(Math.max(0, f.forecastUsd - f.monthToDateUsd)) }}
        />
        {f.budgetUsd !== null ? (
          <span
            className={own.barBudget}
            style={{ left: width(f.budgetUsd) }}
            title={`Budget ${usd(f.budgetUsd)}`}
          />
        ) : null}
      </div>
      <p className={own.forecastText}>
        <strong>{usd(f.monthToDateUsd)}</strong> spent so far + {usd(f.dailyAverageUsd)} a day (the
        average of the last {days(f.basisDays)}) × {f.daysLeft.toFixed(1)} days left ={" "}
        <strong className={over ? own.bad : undefined}>{usd(f.forecastUsd)}</strong> by the end of
        the month
        {f.budgetUsd !== null ? (
          <>
            , against a budget of <strong>{usd(f.budgetUsd)}</strong> (the daily budget ×{" "}
            {f.daysInMonth} days){over ? ": over it at this rate" : ""}.
          </>
        ) : (
          <>
            . No budget is set (<code>WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD</code>).
          </>
        )}
      </p>
      {o.budgets.length > 0 ? (
        <ul className={own.budgets} aria-label="Budgets today">
          {o.budgets.map((b) => (
            <li key={b.provider} data-provider={b.provider} data-exhausted={b.exhausted}>
              <span className={own.budgetName}>{b.provider} today</span>
              {b.budgetUsd !== null ? (
                <progress
                  className={own.progress}
                  max={1}
                  value={Math.min(1, b.budgetUsd > 0 ? b.spentUsd / b.budgetUsd : 1)}
                  aria-label={`${b.provider}: today's spend against its daily budget`}
                />
              ) : null}
              <span>
                {usd(b.spentUsd)}
                {b.budgetUsd !== null ? ` of ${usd(b.budgetUsd)}` : " (no daily budget)"}
                {b.exhausted ? (
                  <span className="badge retracted"> stopped at its budget</span>
                ) : null}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
      {f.embeddingMonthToDateUsd > 0 ? (
        <p className={s.muted}>
          Embedding suppliers spent {usd(f.embeddingMonthToDateUsd)} this month besides (the Meaning
          page); not in the figures above.
        </p>
      ) : null}
    </section>
  );
}

const days = (n: number) => (n === 1 ? "day" : `${Number.isInteger(n) ? n : n.toFixed(1)} days`);

/** "2026-12" → "December 2026". */
function monthName(month: string): string {
  return new Date(`${month}-01T00:00:00Z`).toLocaleDateString("en-GB", {
    month: "long",
    year: "numeric",
    timeZone: "UTC",
  });
}
