"use client";

import { Sparkline } from "@/components/charts";
import s from "@/components/dashboard.module.css";
import { useMeaning } from "@/components/hooks/useMeaning";
import { ms, percent, relative, utc } from "@/lib/dashboard/format";
import type {
  MeaningModel,
  MeaningOverview,
  ProviderCallStats,
  UnregisteredCalls,
} from "@/lib/dashboard/meaning";
import own from "./meaning.module.css";

export function MeaningView() {
  const { data, error } = useMeaning();
  return (
    <>
      {error ? (
        <p className={s.error} role="alert">
          Meaning overview unavailable: {error.message}
        </p>
      ) : null}
      {data ? <Overview o={data} /> : !error ? <p>Loading…</p> : null}
    </>
  );
}

function Overview({ o }: { o: MeaningOverview }) {
  const perMinuteNow = o.models.reduce((a, m) => a + (m.rate.buckets.at(-1)?.perMinute ?? 0), 0);
  const day = [...o.models.map((m) => m.calls), ...o.unregistered].reduce(
    (a, c) => ({ calls: a.calls + c.calls, errors: a.errors + c.errors, cost: a.cost + c.costUsd }),
    { calls: 0, errors: 0, cost: 0 },
  );
  return (
    <>
      <Banner o={o} />
      <div className={own.tiles}>
        <div className={own.tile}>
          <strong>{o.canonical.toLocaleString("en-GB")}</strong>
          <span>canonical items, what every model must cover</span>
        </div>
        <div className={own.tile}>
          <strong>{rate(perMinuteNow)}/min</strong>
          <span>embeddings over the last 5 minutes ({perSecond(perMinuteNow)})</span>
        </div>
        <div className={own.tile}>
          <strong className={day.errors > 0 ? own.bad : undefined}>{day.errors}</strong>
          <span>of {plural(day.calls, "embedding call")} failed in 24 h</span>
        </div>
        <div className={own.tile}>
          <strong>{usd(day.cost)}</strong>
          <span>spent on embeddings in 24 h</span>
        </div>
        <Latency o={o} />
      </div>
      <h2>Models</h2>
      {new Date(o.now).getTime() - new Date(o.countedAt).getTime() > 5_000 ? (
        <p className={s.muted}>
          Coverage and rates counted {relative(o.countedAt, o.now)} (recounted at most once a minute
          on a large database).
        </p>
      ) : null}
      <div className={own.scroll}>
        <table
          className={`${s.table} ${own.models}`}
          data-testid="meaning-models"
          aria-label="Models"
        >
          <thead>
            <tr>
              <th>Model</th>
              <th>Languages</th>
              <th>State</th>
              <th className={s.num}>Coverage</th>
              <th>Thresholds</th>
              <th>Embeddings / min, 1 h</th>
              <th>Calls (24 h), last error</th>
            </tr>
          </thead>
          <tbody>
            {o.models.length === 0 ? (
              <tr>
                <td colSpan={7} className={s.muted}>
                  No model has embedded anything yet: the embed stage registers its model with the
                  first item it embeds.
                </td>
              </tr>
            ) : (
              o.models.map((m) => <ModelRow key={m.id} m={m} o={o} />)
            )}
          </tbody>
        </table>
      </div>
      {o.unregistered.length > 0 ? <Unregistered rows={o.unregistered} now={o.now} /> : null}
    </>
  );
}

function Banner({ o }: { o: MeaningOverview }) {
  const search = o.searchModel;
  return (
    <div className={own.banner}>
      <p data-testid="meaning-backend" data-backend={o.backend.kind}>
        <span className={own.bannerLabel}>Vectors</span>
        <span>
          {o.backend.description}
          {o.backend.pgvectorVersion ? (
            <span className={s.muted}> · pgvector {o.backend.pgvectorVersion}</span>
          ) : null}
          {o.backend.reason ? <span className={s.muted}> ({o.backend.reason})</span> : null}
        </span>
      </p>
      <p data-testid="meaning-search-model" data-model={search?.model ?? ""}>
        <span className={own.bannerLabel}>Search</span>
        {search ? (
          <span>
            ranks by <ModelId id={search.model} />{" "}
            <KindBadge kind={search.kind} label={search.kindLabel} />
            {search.kind === "lexical" ? (
              <span className={s.muted}>
                {" "}
                — no meaning model has completed its backfill; results match letters, not meaning
              </span>
            ) : null}
            {search.note ? <span className={s.muted}> ({search.note})</span> : null}
          </span>
        ) : (
          <span>keyword search only: no model has completed its backfill</span>
        )}
      </p>
    </div>
  );
}

function Latency({ o }: { o: MeaningOverview }) {
  const l = o.latency;
  return (
    <div className={`${own.tile} ${own.wideTile}`} data-testid="meaning-latency">
      {l.count === 0 ? (
        <>
          <strong>—</strong>
          <span>search latency: this server process has answered no search yet</span>
        </>
      ) : (
        <>
          <strong>{pair(l.p50Ms, l.p95Ms)}</strong>
          <span>
            search p50 / p95, max {ms(l.maxMs)}: this server process&apos;s last{" "}
            {plural(l.count, "search")}
            {l.fullTextOnly > 0 ? ` (${l.fullTextOnly} by keywords only)` : ""}
            {l.newestAt ? `, the latest ${relative(l.newestAt, o.now)}` : ""}
          </span>
        </>
      )}
    </div>
  );
}

function KindBadge({ kind, label }: { kind: string; label: string }) {
  return (
    <span
      className={`badge ${kind === "meaning" ? "authoritative" : "fallback"}`}
      data-kind={kind}
      title={
        kind === "lexical"
          ? "Hashed letter triples: finds the same words, not the same meaning"
          : undefined
      }
    >
      {label}
    </span>
  );
}

function ModelRow({ m, o }: { m: MeaningModel; o: MeaningOverview }) {
  const latest = m.rate.buckets.at(-1)?.perMinute ?? 0;
  return (
    <tr data-testid="meaning-model-row" data-model={m.model} data-state={m.state}>
      <td data-label="Model" className={own.model}>
        <ModelId id={m.model} />
        <div className={s.muted}>
          {m.provider} · {m.dims} dims
        </div>
        <div className={own.badges}>
          <KindBadge kind={m.kind} label={m.kindLabel} />
          {m.inSearch ? <span className="badge live">in search</span> : null}
        </div>
      </td>
      <td data-label="Languages">
        <div>{m.languages.length > 0 ? m.languages.join(", ") : "—"}</div>
        <div className={own.badges}>
          {m.limits.map((limit) => (
            <span key={limit} className="badge fallback" data-limit={limit}>
              {limit}
            </span>
          ))}
        </div>
      </td>
      <td data-label="State" className={own.state}>
        <State m={m} o={o} />
      </td>
      <td data-label="Coverage" className={s.num}>
        <strong>{percent(m.coverage)}</strong>
        <div className={s.muted}>
          {m.covered.toLocaleString("en-GB")} of {o.canonical.toLocaleString("en-GB")}
        </div>
        {m.embedded !== m.covered ? (
          <div
            className={s.muted}
            title="Vectors of items that are now duplicates, removed, or edited since"
          >
            {m.embedded.toLocaleString("en-GB")} stored
          </div>
        ) : null}
      </td>
      <td data-label="Thresholds">
        <Thresholds m={m} />
      </td>
      <td data-label="Embeddings / min">
        <Sparkline
          data={m.rate.buckets.map((b) => ({ t: b.t, perMinute: b.perMinute }))}
          field="perMinute"
          label={`${m.model}: embeddings per minute over the last hour, 5-minute buckets`}
        />
        <div className={s.muted}>
          {rate(latest)}/min now · {m.rate.lastHour.toLocaleString("en-GB")} in 1 h
        </div>
      </td>
      <td data-label="Calls (24 h)" className={own.calls}>
        {m.provider !== "http" && m.calls.calls === 0 && !m.calls.lastError ? (
          // The cost ledger records calls to a supplier; a model run here makes none.
          <span className={s.muted}>runs in this deployment: no supplier calls</span>
        ) : (
          <>
            <Calls c={m.calls} />
            <LastError c={m.calls} now={o.now} />
          </>
        )}
      </td>
    </tr>
  );
}

function State({ m, o }: { m: MeaningModel; o: MeaningOverview }) {
  if (m.state === "backfilling") {
    return (
      <div>
        <span className="badge fallback">backfilling</span>
        <progress
          className={own.progress}
          max={1}
          value={m.backfill.progress ?? 0}
          aria-label={`${m.model} backfill`}
        />
        <div className={s.muted}>
          {m.covered.toLocaleString("en-GB")} / {o.canonical.toLocaleString("en-GB")} (
          {percent(m.backfill.progress)}), started{" "}
          <span title={utc(m.backfill.startedAt)}>{relative(m.backfill.startedAt, o.now)}</span>
        </div>
      </div>
    );
  }
  return (
    <div>
      <span className={`badge ${m.state === "complete" ? "live" : "retracted"}`}>{m.state}</span>
      {m.backfill.completedAt ? (
        <div className={s.muted}>
          backfill done{" "}
          <span title={utc(m.backfill.completedAt)}>{relative(m.backfill.completedAt, o.now)}</span>
        </div>
      ) : null}
    </div>
  );
}

function Thresholds({ m }: { m: MeaningModel }) {
  if (m.meaningThreshold === null && m.distinctThreshold === null) {
    return <span className={s.muted}>none: gives dedup no verdict</span>;
  }
  return (
    <div className={s.nowrap}>
      <div>link ≥ {m.meaningThreshold?.toFixed(2) ?? "—"}</div>
      <div className={s.muted}>distinct &lt; {m.distinctThreshold?.toFixed(2) ?? "—"}</div>
    </div>
  );
}

function Calls({ c }: { c: ProviderCallStats }) {
  return (
    <div>
      {plural(c.calls, "call")},{" "}
      <span className={c.errors > 0 ? own.bad : undefined}>{plural(c.errors, "error")}</span>
      <div className={s.muted}>
        {usd(c.costUsd)}
        {c.tokens > 0 ? ` · ${c.tokens.toLocaleString("en-GB")} tokens` : ""}
      </div>
    </div>
  );
}

function LastError({ c, now }: { c: ProviderCallStats; now: string }) {
  if (!c.lastError) return <div className={s.muted}>no error in 7 days</div>;
  return (
    <div className={own.lastError}>
      <span className={own.errorText}>
        {c.lastError.status !== null ? `${c.lastError.status}: ` : ""}
        {c.lastError.message ?? "(no message)"}
      </span>{" "}
      <span className={s.muted} title={utc(c.lastError.at)}>
        {relative(c.lastError.at, now)}
      </span>
    </div>
  );
}

/** A model id, broken only at its separators (after "onnx:", before "@"), never inside a name. */
function ModelId({ id }: { id: string }) {
  const parts = id.split(/(?<=[:/])|(?=@)/);
  return (
    <code className={own.modelId}>
      {parts.map((part, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one id, in a fixed order
        <span key={i}>
          {part}
          {i < parts.length - 1 ? <wbr /> : null}
        </span>
      ))}
    </code>
  );
}

function Unregistered({ rows, now }: { rows: UnregisteredCalls[]; now: string }) {
  return (
    <>
      <h2>Suppliers with no stored vector</h2>
      <p className={s.muted}>
        Embedding calls under a model that has not stored a single vector: a supplier that has
        failed from its first call shows here.
      </p>
      <table
        className={`${s.table} ${own.models} ${own.suppliers}`}
        aria-label="Suppliers with no stored vector"
      >
        <thead>
          <tr>
            <th>Model</th>
            <th>Calls (24 h), last error</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.model} data-model={r.model}>
              <td data-label="Model" className={own.model}>
                <ModelId id={r.model} />
                <div className={s.muted}>{r.provider}</div>
              </td>
              <td data-label="Calls (24 h)" className={own.calls}>
                <Calls c={r} />
                <LastError c={r} now={now} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** "23 / 83 ms": one unit for both when both are under a second. */
function pair(a: number | null, b: number | null): string {
  if (a !== null && b !== null && a < 1000 && b < 1000) {
    return `${Math.round(a)} / ${Math.round(b)} ms`;
  }
  return `${ms(a)} / ${ms(b)}`;
}

const plural = (n: number, word: string) =>
  `${n.toLocaleString("en-GB")} ${word}${n === 1 ? "" : word.endsWith("h") ? "es" : "s"}`;

/** Per-minute rates: whole numbers when large, one decimal when small. */
function rate(perMinute: number): string {
  if (perMinute === 0) return "0";
  return perMinute >= 10 ? Math.round(perMinute).toLocaleString("en-GB") : perMinute.toFixed(1);
}

/** The same rate per second (the unit the issue names); below a tenth, only said to be so. */
function perSecond(perMinute: number): string {
  const v = perMinute / 60;
  if (v === 0) return "0/s";
  return v < 0.1 ? "under 0.1/s" : `${v.toFixed(1)}/s`;
}

/** Dollars: cents when there are any, else enough digits to see a fraction of a cent. */
function usd(value: number): string {
  if (value === 0) return "$0";
  if (value >= 0.01) return `$${value.toFixed(2)}`;
  return `$${value.toPrecision(2)}`;
}
