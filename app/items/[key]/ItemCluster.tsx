import Link from "next/link";
import s from "@/components/dashboard.module.css";
import type { ItemDedup } from "@/lib/dashboard/dedup";
import { when } from "@/lib/dashboard/format";

const STAGE: Record<string, string> = {
  url: "the same story URL",
  exact: "the same text",
  near: "a near match",
  meaning: "the same meaning",
  review: "an operator's confirmation",
};

/** The item's dedup: its cluster (canonical and members), and what linked this item into it. */
export function ItemCluster({ dedup, version }: { dedup: ItemDedup | null; version: number }) {
  if (!dedup) {
    return (
      <section className={s.card} aria-label="Cluster">
        <h2>Cluster</h2>
        <p className={s.muted}>Not decided by the dedup stage yet.</p>
      </section>
    );
  }
  const c = dedup.cluster;
  const l = dedup.link;
  return (
    <section className={s.card} aria-label="Cluster">
      <h2>Cluster</h2>
      <p data-testid="dedup-outcome">
        {c ? (
          <>
            In <Link href={`/dedup/clusters/${c.id}`}>cluster {c.id}</Link>: {c.members} member
            {c.members === 1 ? "" : "s"} from {c.outlets} outlet{c.outlets === 1 ? "" : "s"}, first
            seen {when(c.firstSeenAt)}.{" "}
            {l ? (
              <>
                Linked by {STAGE[l.stage] ?? l.stage}
                {l.stage === "url" || l.stage === "exact"
                  ? ""
                  : ` (score ${l.score.toFixed(2)} against ${l.threshold.toFixed(2)})`}{" "}
                to <Link href={`/items/${l.matchedKey}`}>{l.matchedTitle ?? "an item"}</Link>,{" "}
                {when(l.decidedAt)} by {l.decidedBy}.
              </>
            ) : (
              "This item is the cluster's canonical copy."
            )}
          </>
        ) : dedup.outcome === "review" ? (
          "Waiting for review: it came close to another item but not close enough to link."
        ) : dedup.outcome === "removed" ? (
          "Removed from clusters (retracted or without text)."
        ) : (
          "Unique: no other item carries this story."
        )}{" "}
        <span className={s.muted}>
          Decided {when(dedup.decidedAt)} for v{dedup.version}
          {dedup.version < version
            ? ` (the item is at v${version} now: decided again shortly)`
            : ""}
          .
          {dedup.pendingReviews > 0
            ? ` ${dedup.pendingReviews} pair${dedup.pendingReviews === 1 ? "" : "s"} with it wait for review.`
            : ""}
        </span>
      </p>
      {c ? (
        <table className={s.table} aria-label="Cluster members">
          <thead>
            <tr>
              <th>Member</th>
              <th>Source</th>
            </tr>
          </thead>
          <tbody>
            {c.others.map((o) => (
              <tr key={o.entryKey}>
                <td className={s.title}>
                  <Link href={`/items/${o.entryKey}`}>
                    {o.title ?? <span className="untitled">(no title)</span>}
                  </Link>
                  {o.canonical ? <span className={s.muted}> (canonical)</span> : null}
                </td>
                <td className={s.nowrap}>{o.sourceId}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {c && c.members - 1 > c.others.length ? (
        <p className={s.muted}>
          <Link href={`/dedup/clusters/${c.id}`}>All {c.members} members →</Link>
        </p>
      ) : null}
    </section>
  );
}
