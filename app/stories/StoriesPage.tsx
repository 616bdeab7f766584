"use client";

import type { ReactNode } from "react";
import shared from "@/components/dashboard.module.css";
import {
  type StoriesJson,
  type StorySourceJson,
  useStoriesQuery,
} from "@/components/hooks/useStories";
import { duration, relative, utc } from "@/lib/dashboard/format";
import styles from "./stories.module.css";

/** The delivery counts' window; the webhook lag is always the last hour. */
const HOURS = 24;

type Level = "ok" | "amber" | "red";

export function StoriesPage() {
  const { data, error } = useStoriesQuery({ hours: HOURS });
  const s = data?.stories;
  if (error && !s) return <p className={shared.error}>Stories unavailable: {error.message}</p>;
  if (!s) return <p>Loading…</p>;
  return (
    <>
      {error ? <p className={shared.error}>Refresh failed: {error.message}</p> : null}
      {s.sources.length === 0 ? <Empty /> : null}
      {s.sources.map((source) => (
        <Source key={source.id} s={source} now={s.now} hours={s.hours} />
      ))}
      <Unattributed rows={s.unattributed} now={s.now} />
    </>
  );
}

function Empty() {
  return (
    <div className="empty" data-testid="stories-empty">
      <p>No story-api source is configured.</p>
      <p>
        Add one to <code>wirewatch.config.json</code>: a source with{" "}
        <code>"kind": "story-api"</code>, the API's <code>url</code>, the <code>tickers</code> it
        follows, its <code>storyMode</code> (<code>snapshot</code> or <code>fetch</code>) and its{" "}
        <code>webhookSecrets</code>. Its stories, catch-up and webhooks show here once the consumer
        runs.
      </p>
    </div>
  );
}

function Source({ s, now, hours }: { s: StorySourceJson; now: string; hours: number }) {
  const health = healthWords(s, now);
  const rejectedLevel: Level = s.rejected.reasons.some((r) => r.reason === "bad_signature")
    ? "red"
    : s.rejected.total > 0
      ? "amber"
      : "ok";
  const headingId = `story-source-${s.id}`;
  return (
    <section className={styles.source} aria-labelledby={headingId} data-story-source={s.id}>
      <div className={styles.header}>
        <h2 id={headingId}>{s.name}</h2>
        <span className={styles.health} data-level={health.level} data-health={s.health}>
          {health.text}
        </span>
      </div>
      <p className={styles.sub}>
        {s.id} · {s.mode ?? "no"} mode · {secretsWords(s.secrets)}
        {s.enabled ? "" : " · disabled"}
        {s.sync.cursorSavedAt ? ` · cursor saved ${relative(s.sync.cursorSavedAt, now)}` : ""}
        {health.detail ? ` · ${health.detail}` : ""}
      </p>

      <div className={styles.tiles}>
        <Tile id="stories" title="Stories" value={`${s.stories.open} open`}>
          {s.stories.closed} closed (kept, so a late event cannot bring one back)
        </Tile>
        <Tile id="webhooks" title={`Webhook deliveries · ${hours} h`} value={s.webhooks.verified}>
          <span data-testid="webhook-split">
            {s.webhooks.first} first · {s.webhooks.replays} replays
          </span>
          <br />
          {s.recent.lagP50Seconds === null
            ? `no webhook in the last hour (${s.recent.events} events seen)`
            : `lag p50 ${seconds(s.recent.lagP50Seconds)} · p95 ${seconds(s.recent.lagP95Seconds)} (last hour, ${s.recent.events} events)`}
        </Tile>
        <Tile
          id="rejected"
          title="Rejected deliveries"
          value={s.rejected.total}
          level={rejectedLevel}
        >
          {s.rejected.reasons.length === 0 ? (
            "none refused"
          ) : (
            <Reasons rows={s.rejected.reasons} now={now} />
          )}
        </Tile>
        <Tile
          id="missed"
          title="Missed webhooks"
          value={s.sync.missedWebhooks}
          level={s.sync.missedWebhooks > 0 ? "amber" : "ok"}
        >
          events the catch-up found that no webhook delivered
        </Tile>
        <Tile id="unlisted" title="Unlisted events" value={s.sync.unlistedEvents}>
          delivered by a webhook, passed over by the catch-up
        </Tile>
        <Tile
          id="reloads"
          title="Reloads"
          value={s.reloads.count}
          level={s.reloads.inProgress ? "amber" : "ok"}
        >
          {reloadWords(s, now)}
        </Tile>
        <Tile
          id="notifications"
          title="Notifications claimed"
          value={s.notifications.claimed}
          level={s.notifications.lost > 0 ? "amber" : "ok"}
        >
          <span data-testid="notification-split">
            {s.notifications.sent} sent · {s.notifications.lost} lost
          </span>
          {s.notifications.sending > 0 ? ` · ${s.notifications.sending} sending` : ""}
          <br />
          lost: claimed, then a crash before the send (never sent twice)
        </Tile>
      </div>

      <h3>Tickers</h3>
      <table className={`sources ${shared.table} ${styles.tickers}`} data-testid="tickers">
        <thead>
          <tr>
            <th scope="col">Ticker</th>
            <th scope="col" className="num">
              Open
            </th>
            <th scope="col" className="num">
              Closed
            </th>
            <th scope="col">Loaded</th>
          </tr>
        </thead>
        <tbody>
          {s.tickers.map((t) => (
            <tr key={t.ticker} data-ticker={t.ticker}>
              <th scope="row">{t.ticker}</th>
              <td className="num" data-col="open">
                {t.open}
              </td>
              <td className="num" data-col="closed">
                {t.closed}
              </td>
              <td data-col="loaded" title={utc(t.loadedAt)}>
                {t.loadedAt ? (
                  relative(t.loadedAt, now)
                ) : (
                  <span className={styles.pending}>
                    {t.followed ? "pending (one-time load)" : "not picked up yet"}
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Tile({
  id,
  title,
  value,
  level = "ok",
  children,
}: {
  id: string;
  title: string;
  value: string | number;
  level?: Level;
  children: ReactNode;
}) {
  return (
    <section className={styles.tile} data-tile={id} data-level={level} aria-label={title}>
      <h3>{title}</h3>
      <span className={styles.value} data-testid="value">
        {value}
      </span>
      <span className={styles.note}>{children}</span>
    </section>
  );
}

function Reasons({ rows, now }: { rows: StoriesJson["unattributed"]; now: string }) {
  return (
    <ul className={styles.reasons}>
      {rows.map((r) => (
        <li key={r.reason} data-reason={r.reason} title={r.lastDetail ?? undefined}>
          {r.reason} {r.count} · last {relative(r.lastAt, now)}
        </li>
      ))}
    </ul>
  );
}

function Unattributed({ rows, now }: { rows: StoriesJson["unattributed"]; now: string }) {
  if (rows.length === 0) return null;
  return (
    <section aria-labelledby="unattributed">
      <h2 id="unattributed">Refused deliveries naming no source</h2>
      <p className="lede">
        Deliveries to the webhook endpoint that could not be tied to a story-api source.
      </p>
      <table className={`sources ${shared.table}`} data-testid="unattributed">
        <thead>
          <tr>
            <th scope="col">Reason</th>
            <th scope="col" className="num">
              Count
            </th>
            <th scope="col">First</th>
            <th scope="col">Last</th>
            <th scope="col">Last detail</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.reason} data-reason={r.reason}>
              <td>{r.reason}</td>
              <td className="num">{r.count}</td>
              <td title={utc(r.firstAt)}>{relative(r.firstAt, now)}</td>
              <td title={utc(r.lastAt)}>{relative(r.lastAt, now)}</td>
              <td className={shared.mono}>
                {r.lastDetail ?? "–"}
                {r.lastWebhookId ? ` (${r.lastWebhookId})` : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The header's health in words: what an operator checks first. */
function healthWords(
  s: StorySourceJson,
  now: string,
): { level: Level; text: string; detail?: string } {
  const age = s.sync.cursorAgeSeconds;
  const caughtUp = age === null ? "never caught up" : `last caught up ${duration(age)} ago`;
  switch (s.health) {
    case "reloading":
      return {
        level: "amber",
        text: `reloading in full (started ${relative(s.reloads.lastStartedAt, now)})`,
        detail: caughtUp,
      };
    case "failing":
      return {
        level: "red",
        text: `catch-up failing: ${s.sync.lastError ?? "unknown error"}`,
        detail: `${caughtUp}; failed ${relative(s.sync.lastErrorAt, now)}`,
      };
    case "never":
      return { level: "amber", text: "not caught up yet" };
    case "stale":
      return { level: "amber", text: `catch-up stale: caught up ${duration(age ?? 0)} ago` };
    default:
      return { level: "ok", text: `caught up ${duration(age ?? 0)} ago` };
  }
}

function reloadWords(s: StorySourceJson, now: string): string {
  const r = s.reloads;
  if (r.inProgress) return `in progress, started ${relative(r.lastStartedAt, now)}`;
  if (!r.lastStartedAt) return "never reloaded in full";
  const took =
    r.lastFinishedAt &&
    (new Date(r.lastFinishedAt).getTime() - new Date(r.lastStartedAt).getTime()) / 1000;
  return `last ${relative(r.lastStartedAt, now)}${took ? `, took ${duration(took)}` : ""}`;
}

function secretsWords(n: number): string {
  if (n === 0) return "no webhook secret (every delivery is refused)";
  if (n === 1) return "1 secret";
  return `${n} secrets (rotation)`;
}

function seconds(value: number | null): string {
  if (value === null) return "–";
  return value < 10 ? `${value.toFixed(value < 1 ? 2 : 1)} s` : duration(value);
}
