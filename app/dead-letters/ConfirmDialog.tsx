import type { DeadLetterSelection } from "@/components/hooks/useDeadLetters";
import type { DiscardResult, RequeueResult } from "@/workers/queue/deadLetters";
import s from "./deadLetters.module.css";

/** An action's dry run, counted and waiting for the admin to confirm it. */
export type Pending =
  | { kind: "requeue"; label: string; selection: DeadLetterSelection; preview: RequeueResult }
  | { kind: "discard"; label: string; selection: DeadLetterSelection; preview: DiscardResult };

/** Step one of every action: a dry run of it on `filter`, which the dialog then shows. */
export type Preview = (
  kind: Pending["kind"],
  label: string,
  filter: DeadLetterSelection["filter"],
) => void;

/** The dry run's counts and refusals, with the buttons that run the action for real. */
export function ConfirmDialog({
  pending,
  busy,
  onConfirm,
  onCancel,
}: {
  pending: Pending;
  busy: boolean;
  onConfirm: (force?: boolean) => void;
  onCancel: () => void;
}) {
  const p = pending.preview;
  const n =
    pending.kind === "requeue" ? (p as RequeueResult).requeued : (p as DiscardResult).discarded;
  const refused = pending.kind === "requeue" ? (p as RequeueResult).refused : {};
  const superseded = pending.kind === "requeue" ? (p as RequeueResult).superseded : 0;
  const breakerRefused = refused["breaker open"] ?? 0;
  const verb = pending.kind === "requeue" ? "Requeue" : "Discard";
  return (
    <section className={s.confirm} role="dialog" aria-label={`${verb} dead letters`}>
      <h2>
        {verb} {pending.label}?
      </h2>
      <p data-testid="dry-run-count">
        Dry run: {n} of {p.matched} matching dead letter{p.matched === 1 ? "" : "s"} would be{" "}
        {pending.kind === "requeue" ? "requeued" : "discarded (archived, not deleted)"}.
        {p.moreMatched ? ` ${p.capped} more are beyond the cap of ${p.cap}.` : ""}
      </p>
      {superseded > 0 ? (
        <p data-testid="dry-run-superseded">
          {superseded} would be resolved, not requeued: {supersededText(p as RequeueResult)}. The
          live job is the same work, due again; the dead letter is archived and the action audited.
        </p>
      ) : null}
      {Object.keys(refused).length > 0 ? (
        <ul aria-label="Refusals">
          {Object.entries(refused).map(([why, count]) => (
            <li key={why}>
              {count} refused: <strong>{why}</strong>
              {why === "breaker open"
                ? " (its source's circuit breaker is open: it would fail again at once)"
                : why === "already queued"
                  ? " (a newer dead letter with the same key is requeued instead)"
                  : ""}
            </li>
          ))}
        </ul>
      ) : null}
      <div className={s.actions}>
        <button
          type="button"
          className={`${s.button} ${pending.kind === "requeue" ? s.primary : s.danger}`}
          disabled={busy || n + superseded === 0}
          onClick={() => onConfirm(false)}
        >
          {n === 0 && superseded > 0
            ? `Resolve ${superseded}`
            : `${verb} ${n}${superseded > 0 ? `, resolve ${superseded}` : ""}`}
        </button>
        {breakerRefused > 0 ? (
          <button
            type="button"
            className={`${s.button} ${s.danger}`}
            disabled={busy}
            onClick={() => onConfirm(true)}
          >
            Force: requeue {n + breakerRefused} into the open breaker
          </button>
        ) : null}
        <button type="button" className={s.button} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </section>
  );
}

/** "already queued as job 12", or for several "already queued as jobs 12, 14 …". */
export function supersededText(r: RequeueResult): string {
  const by = [...new Set(Object.values(r.supersededBy))];
  if (by.length === 1) return `already queued as job ${by[0]}`;
  const shown = by.slice(0, 5).join(", ");
  return `already queued as jobs ${shown}${by.length > 5 ? " …" : ""}`;
}
