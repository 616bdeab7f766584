"use client";

import Link from "next/link";
import s from "@/components/dashboard.module.css";
import { ApiError } from "@/components/hooks/api";
import { useDecideReview, useDedupReviews } from "@/components/hooks/useDedup";
import { Pager, usePages } from "@/components/ui/Pager";
import { readEvidence } from "@/lib/dashboard/dedupEvidence";
import { when } from "@/lib/dashboard/format";
import type { ReviewSide, ReviewView } from "@/workers/admin/dedup";
import own from "./dedup.module.css";
import { EvidenceView, ScoreVsThreshold } from "./Evidence";

/** Pairs in the grey band, side by side, for an operator to confirm (link) or reject. */
export function ReviewQueue({ pending }: { pending: number | null }) {
  const pages = usePages();
  const { data, error } = useDedupReviews(pages.cursor);
  const decide = useDecideReview();
  const depth = data?.pending ?? pending;
  return (
    <section aria-label="Review queue">
      <h2>Review queue{depth !== null ? ` (${depth} pending)` : ""}</h2>
      <p className="lede">
        Pairs that scored inside the grey band: close, but not close enough to link on their own.
        Confirming links them (stage "review"); rejecting means the stage never merges that pair
        again. Both are audited.
      </p>
      {error ? <p className={s.error}>{error.message}</p> : null}
      {decide.error ? <ActionError error={decide.error} /> : null}
      {data && data.reviews.length === 0 ? (
        <p className="empty">No pair is waiting for review.</p>
      ) : null}
      {data?.reviews.map((r) => (
        <Review
          key={r.id}
          r={r}
          busy={decide.isPending}
          onDecide={(decision) => decide.mutate({ id: r.id, decision })}
        />
      ))}
      <Pager pages={pages} next={data?.nextBefore} firstLabel="← Newest" nextLabel="Older →" />
    </section>
  );
}

function Side({ side, label }: { side: ReviewSide; label: string }) {
  return (
    <div className={own.member}>
      <span className={own.meta}>{label}</span>
      <h3>
        <Link href={`/items/${side.entryKey}`}>
          {side.title ?? <span className="untitled">(no title)</span>}
        </Link>
      </h3>
      <span className={own.meta}>
        {side.sourceId ?? "—"} · v{side.version ?? "?"}
        {side.deleted ? " · retracted" : ""}
      </span>
      {side.summary ? <p className={own.meta}>{side.summary}</p> : null}
    </div>
  );
}

function Review({
  r,
  busy,
  onDecide,
}: {
  r: ReviewView;
  busy: boolean;
  onDecide: (d: "confirm" | "reject") => void;
}) {
  return (
    <article className={own.review} data-review-id={r.id} aria-label={`Review ${r.id}`}>
      <div className={own.pair}>
        <Side side={r.entry} label="This item" />
        <Side side={r.candidate} label="Came close to" />
      </div>
      <p>
        <ScoreVsThreshold stage={r.stage} score={r.score} threshold={r.threshold} />{" "}
        <span className={own.meta}>
          · {r.stage} · queued {when(r.createdAt)}
        </span>
      </p>
      <details>
        <summary>Evidence</summary>
        <EvidenceView evidence={readEvidence(r.evidence)} here="this item" there="the other" />
      </details>
      <div className={own.toolbar}>
        <button
          type="button"
          className={`${s.button} ${own.primary}`}
          disabled={busy}
          onClick={() => onDecide("confirm")}
        >
          Confirm: same story
        </button>
        <button
          type="button"
          className={s.button}
          disabled={busy}
          onClick={() => onDecide("reject")}
        >
          Reject: different
        </button>
      </div>
    </article>
  );
}

/** An action's error; a 401 offers the login page, since every action here needs an admin. */
export function ActionError({ error }: { error: Error }) {
  return (
    <p className={s.error} role="alert">
      {error.message}
      {error instanceof ApiError && error.status === 401 ? (
        <>
          {" "}
          <Link href="/login?next=/dedup">Log in</Link>
        </>
      ) : null}
    </p>
  );
}
