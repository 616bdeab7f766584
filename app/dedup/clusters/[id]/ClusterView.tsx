"use client";

import Link from "next/link";
import { useState } from "react";
import s from "@/components/dashboard.module.css";
import { ApiError } from "@/components/hooks/api";
import { useDedupCluster, useUndoLink } from "@/components/hooks/useDedup";
import type { ClusterMember } from "@/lib/dashboard/dedup";
import { when } from "@/lib/dashboard/format";
import own from "../../dedup.module.css";
import { EvidenceView, ScoreVsThreshold, stageText } from "../../Evidence";
import { ActionError } from "../../ReviewQueue";

/** One cluster: its members side by side, what linked each (with the evidence), and undo. */
export function ClusterView({ id }: { id: string }) {
  const { data, error, isLoading } = useDedupCluster(id);
  const undo = useUndoLink();
  const [confirming, setConfirming] = useState<ClusterMember | null>(null);

  if (isLoading) return <p>Loading…</p>;
  if (error || !data) {
    return (
      <>
        <h1>Cluster</h1>
        <p className={s.error} role="alert">
          {error instanceof ApiError && error.status === 404
            ? "No cluster with this id."
            : (error?.message ?? "Not found.")}
        </p>
        <Link href="/dedup">← Dedup</Link>
      </>
    );
  }
  const { cluster, members } = data;
  const byKey = new Map(members.map((m) => [m.entryKey, m]));
  // Headlines for the history's keys: members now, and items whose links ended.
  const titles = new Map<string, string>();
  for (const l of data.endedLinks) if (l.title) titles.set(l.entryKey, l.title);
  for (const m of members) if (m.title) titles.set(m.entryKey, m.title);

  return (
    <>
      <p>
        <Link href="/dedup">← Dedup</Link>
      </p>
      <h1 className={s.headline} data-testid="cluster-title">
        {cluster.canonicalTitle ?? <span className="untitled">(no title)</span>}
      </h1>
      <p className="lede">
        Cluster {cluster.id} · {cluster.members} member{cluster.members === 1 ? "" : "s"} from{" "}
        {cluster.outlets} outlet{cluster.outlets === 1 ? "" : "s"} · first seen{" "}
        {when(cluster.firstSeenAt)}
        {cluster.dissolvedAt ? ` · dissolved ${when(cluster.dissolvedAt)}` : ""}
      </p>
      {undo.error ? <ActionError error={undo.error} /> : null}
      {confirming?.linkedBy ? (
        <section className={own.confirm} role="dialog" aria-label="Undo link">
          <p>
            Undo the {confirming.linkedBy.stage} link of “{confirming.title ?? confirming.entryKey}”
            ({confirming.sourceName ?? confirming.sourceId})? It leaves this cluster and the{" "}
            {confirming.linkedBy.stage} stage will never merge this pair again. Audited.
          </p>
          <div className={own.toolbar}>
            <button
              type="button"
              className={`${s.button} ${own.danger}`}
              disabled={undo.isPending}
              onClick={() => {
                const linkId = confirming.linkedBy?.id as string;
                setConfirming(null);
                undo.mutate({ linkId });
              }}
            >
              Undo the link
            </button>
            <button type="button" className={s.button} onClick={() => setConfirming(null)}>
              Cancel
            </button>
          </div>
        </section>
      ) : null}

      <section className={own.side} aria-label="Members">
        {members.map((m) => (
          <Member
            key={m.entryKey}
            m={m}
            matched={m.linkedBy ? byKey.get(m.linkedBy.matchedKey) : undefined}
            onUndo={() => setConfirming(m)}
          />
        ))}
      </section>
      {cluster.members > members.length ? (
        <p className={s.muted}>
          Showing the first {members.length} of {cluster.members} members.
        </p>
      ) : null}

      <h2>Links that ended</h2>
      {data.endedLinks.length === 0 ? (
        <p className="lede">None: every link made into this cluster still stands.</p>
      ) : (
        <div className={own.scroll}>
          <table className={s.table} aria-label="Ended links">
            <thead>
              <tr>
                <th>Item</th>
                <th>Stage</th>
                <th className={s.num}>Score</th>
                <th>Linked</th>
                <th>Ended</th>
                <th>Why</th>
              </tr>
            </thead>
            <tbody>
              {data.endedLinks.map((l) => (
                <tr key={l.id} data-link-id={l.id}>
                  <td className={s.title}>
                    <Link href={`/items/${l.entryKey}`}>{l.title ?? l.entryKey.slice(0, 12)}</Link>
                  </td>
                  <td>{l.stage}</td>
                  <td className={s.num}>
                    {l.score.toFixed(2)} / {l.threshold.toFixed(2)}
                  </td>
                  <td className={s.nowrap}>{when(l.decidedAt)}</td>
                  <td className={s.nowrap}>{when(l.endedAt)}</td>
                  <td>
                    {l.endedReason ?? "—"}
                    {l.endedBy ? ` by ${l.endedBy}` : ""}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h2>History</h2>
      <div className={own.scroll}>
        <table className={s.table} aria-label="Cluster history">
          <thead>
            <tr>
              <th>When</th>
              <th>What</th>
              <th>Item</th>
              <th>Detail</th>
            </tr>
          </thead>
          <tbody>
            {data.events.map((e) => (
              <tr key={e.id}>
                <td className={s.nowrap}>{when(e.at)}</td>
                <td>{e.kind}</td>
                <td className={s.title}>
                  {e.entryKey ? (
                    <Link href={`/items/${e.entryKey}`}>
                      {titles.get(e.entryKey) ?? `${e.entryKey.slice(0, 10)}…`}
                    </Link>
                  ) : (
                    "—"
                  )}
                </td>
                <td>{eventDetail(e.detail, titles)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function Member({
  m,
  matched,
  onUndo,
}: {
  m: ClusterMember;
  matched: ClusterMember | undefined;
  onUndo: () => void;
}) {
  const l = m.linkedBy;
  return (
    <article
      className={`${own.member} ${m.canonical ? own.canonical : ""}`}
      data-entry-key={m.entryKey}
      aria-label={m.title ?? m.entryKey}
    >
      <span className={own.meta}>
        {m.canonical ? "Canonical" : "Member"} · {m.sourceName ?? m.sourceId}
        {m.live ? "" : " · retracted"}
      </span>
      <h3>
        <Link href={`/items/${m.entryKey}`}>
          {m.title ?? <span className="untitled">(no title)</span>}
        </Link>
      </h3>
      <span className={own.meta}>first seen {when(m.firstSeenAt)}</span>
      {l ? (
        <>
          <p>
            <strong>{stageText(l.stage)}</strong>
            <br />
            <ScoreVsThreshold stage={l.stage} score={l.score} threshold={l.threshold} />
          </p>
          <span className={own.meta}>
            matched “{l.matchedTitle ?? matched?.title ?? `${l.matchedKey.slice(0, 12)}…`}”
            {matched ? ` (${matched.sourceName ?? matched.sourceId})` : ""} · {when(l.decidedAt)} by{" "}
            {l.decidedBy}
          </span>
          {l.evidence ? (
            <EvidenceView evidence={l.evidence} here="this item" there="the matched item" />
          ) : null}
          <div className={own.toolbar}>
            <button type="button" className={s.button} onClick={onUndo}>
              Undo link…
            </button>
          </div>
        </>
      ) : m.canonical ? (
        <p className={own.meta}>The others are linked to this one.</p>
      ) : (
        <p className={own.meta}>No live link (being re-decided).</p>
      )}
    </article>
  );
}

/** A cluster event's detail in words: the stage and score of a join, the reason of an election. */
function eventDetail(detail: unknown, titles: Map<string, string>): string {
  if (!detail || typeof detail !== "object") return "—";
  const d = detail as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of ["canonicalKey", "canonical", "from", "to"] as const) {
    const v = d[k];
    if (typeof v === "string" && /^[0-9a-f]{64}$/.test(v)) {
      parts.push(
        `${k === "canonicalKey" ? "canonical" : k}: ${titles.get(v) ?? `${v.slice(0, 10)}…`}`,
      );
    }
  }
  if (typeof d.stage === "string") parts.push(d.stage);
  if (typeof d.score === "number" && d.stage !== "url" && d.stage !== "exact")
    parts.push(`score ${d.score.toFixed(2)}`);
  for (const k of ["reason", "why"] as const)
    if (typeof d[k] === "string") parts.push(d[k] as string);
  if (typeof d.by === "string") parts.push(`by ${d.by}`);
  return parts.length ? parts.join(" · ") : JSON.stringify(detail).slice(0, 200);
}
