"use client";

import Link from "next/link";
import { useMemo, useState } from "react";
import { ApiError } from "@/components/hooks/api";
import {
  type DeadLetterQuery,
  type DeadLetterSelection,
  useDeadLetter,
  useDeadLetterGroups,
  useDeadLetters,
  useDiscardDeadLetters,
  useRequeueDeadLetters,
} from "@/components/hooks/useDeadLetters";
import type { DiscardResult, RequeueResult } from "@/workers/queue/deadLetters";
import s from "./deadLetters.module.css";

const SINCE = [
  { label: "any time", hours: 0 },
  { label: "last hour", hours: 1 },
  { label: "last 6 hours", hours: 6 },
  { label: "last 24 hours", hours: 24 },
  { label: "last 7 days", hours: 24 * 7 },
];

export const when = (iso: string | null | undefined) =>
  iso ? `${iso.slice(0, 19).replace("T", " ")} UTC` : "—";

export function age(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return "—";
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 2 * 86400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}

type Pending =
  | { kind: "requeue"; label: string; selection: DeadLetterSelection; preview: RequeueResult }
  | { kind: "discard"; label: string; selection: DeadLetterSelection; preview: DiscardResult };

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error as Error;
  return (
    <p className={s.error} role="alert">
      {e instanceof ApiError && e.status === 401 ? (
        <>
          {e.message}. <Link href="/login">Log in</Link>
        </>
      ) : (
        e.message
      )}
    </p>
  );
}

export function DeadLettersView() {
  const [stage, setStage] = useState("");
  const [source, setSource] = useState("");
  const [code, setCode] = useState("");
  const [sinceHours, setSinceHours] = useState(0);
  const [from, setFrom] = useState<string | undefined>();
  const [fingerprint, setFingerprint] = useState<string | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [inspect, setInspect] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const filter: DeadLetterQuery = useMemo(
    () => ({
      stage: stage || undefined,
      source: source.trim() || undefined,
      code: code.trim() || undefined,
      from,
    }),
    [stage, source, code, from],
  );
  const listFilter = useMemo(
    () => ({ ...filter, fingerprint: fingerprint ?? undefined }),
    [filter, fingerprint],
  );
  const groups = useDeadLetterGroups(filter);
  const list = useDeadLetters(listFilter, cursor);
  const requeue = useRequeueDeadLetters();
  const discard = useDiscardDeadLetters();
  const busy = requeue.isPending || discard.isPending;
  const actionError = requeue.error ?? discard.error;

  const resetPage = () => {
    setCursor(null);
    setSelected(new Set());
  };

  /** Step one of every action: a dry run, whose counts the confirmation shows. */
  const preview = (
    kind: "requeue" | "discard",
    label: string,
    filterOf: DeadLetterSelection["filter"],
  ) => {
    setNotice(null);
    requeue.reset();
    discard.reset();
    const selection: DeadLetterSelection = { filter: filterOf, dryRun: true };
    if (kind === "requeue") {
      requeue.mutate(selection, {
        onSuccess: (preview) => setPending({ kind, label, selection, preview }),
      });
    } else {
      discard.mutate(selection, {
        onSuccess: (preview) => setPending({ kind, label, selection, preview }),
      });
    }
  };

  const confirm = (force = false) => {
    if (!pending) return;
    const selection = { ...pending.selection, dryRun: false };
    const done = () => {
      setPending(null);
      setSelected(new Set());
      setCursor(null);
    };
    if (pending.kind === "requeue") {
      requeue.mutate(
        { ...selection, force },
        {
          onSuccess: (r) => {
            const refused = Object.entries(r.refused)
              .map(([why, n]) => `${n} refused (${why})`)
              .join(", ");
            setNotice(
              `Requeued ${r.requeued} of ${r.matched}` +
                (r.superseded > 0 ? `; ${r.superseded} resolved (${supersededText(r)})` : "") +
                `${refused ? `; ${refused}` : ""}.` +
                (r.moreMatched ? ` ${r.capped} more left for another call.` : ""),
            );
            done();
          },
        },
      );
    } else {
      discard.mutate(selection, {
        onSuccess: (r) => {
          setNotice(`Discarded ${r.discarded} of ${r.matched} (archived, kept for inspection).`);
          done();
        },
      });
    }
  };

  const stats = groups.data;
  const stages = stats?.byStage.map((b) => b.stage) ?? [];
  const items = list.data?.items ?? [];
  const allChecked = items.length > 0 && items.every((d) => selected.has(d.id));

  return (
    <>
      <section className={s.summary} aria-label="Dead-letter depth">
        <div className={s.stat}>
          <strong data-testid="dlq-depth">{stats ? stats.depth : "…"}</strong> dead letters
        </div>
        <div className={s.stat}>
          <strong>{age(stats?.oldestAgeSeconds)}</strong> oldest
        </div>
        {stats?.byStage.map((b) => (
          <div className={s.stat} key={b.stage}>
            <strong>{b.depth}</strong> in {b.stage}
          </div>
        ))}
      </section>

      <form
        className={s.filters}
        aria-label="Filter dead letters"
        onSubmit={(e) => e.preventDefault()}
      >
        <label>
          Stage
          <select
            value={stage}
            onChange={(e) => {
              setStage(e.target.value);
              resetPage();
            }}
          >
            <option value="">all stages</option>
            {[...new Set([...stages, stage].filter(Boolean))].map((q) => (
              <option key={q} value={q}>
                {q}
              </option>
            ))}
          </select>
        </label>
        <label>
          Source
          <input
            value={source}
            placeholder="source id"
            onChange={(e) => {
              setSource(e.target.value);
              resetPage();
            }}
          />
        </label>
        <label>
          Error code
          <input
            value={code}
            placeholder="e.g. http_503"
            onChange={(e) => {
              setCode(e.target.value);
              resetPage();
            }}
          />
        </label>
        <label>
          Died
          <select
            value={sinceHours}
            onChange={(e) => {
              const hours = Number(e.target.value);
              setSinceHours(hours);
              setFrom(hours ? new Date(Date.now() - hours * 3600_000).toISOString() : undefined);
              resetPage();
            }}
          >
            {SINCE.map((o) => (
              <option key={o.hours} value={o.hours}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
      </form>

      {notice ? (
        <p className={s.notice} role="status">
          {notice}
        </p>
      ) : null}
      <ErrorNote error={actionError ?? groups.error ?? list.error} />

      {pending ? (
        <ConfirmPanel
          pending={pending}
          busy={busy}
          onConfirm={confirm}
          onCancel={() => setPending(null)}
        />
      ) : null}

      <h2>Groups by cause</h2>
      {stats && stats.groups.length === 0 ? (
        <p className="empty">No dead letters{from || stage || source || code ? " match" : ""}.</p>
      ) : (
        <table className={s.table} aria-label="Dead-letter groups">
          <thead>
            <tr>
              <th>Fingerprint</th>
              <th>Stage</th>
              <th>Code</th>
              <th className={s.num}>Count</th>
              <th>First seen</th>
              <th>Last seen</th>
              <th>Example error</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {stats?.groups.map((g) => (
              <tr
                key={g.fingerprint ?? "none"}
                data-fingerprint={g.fingerprint ?? ""}
                className={g.fingerprint && g.fingerprint === fingerprint ? s.selected : undefined}
              >
                <td className={s.mono}>{g.fingerprint ?? "—"}</td>
                <td>{g.stage}</td>
                <td className={s.mono}>{g.code ?? "—"}</td>
                <td className={s.num} data-testid="group-count">
                  {g.count}
                </td>
                <td className={s.nowrap}>{when(g.firstSeen)}</td>
                <td className={s.nowrap}>{when(g.lastSeen)}</td>
                <td className={s.message}>{g.sampleMessage ?? ""}</td>
                <td>
                  <div className={s.actions}>
                    <button
                      type="button"
                      className={s.button}
                      disabled={!g.fingerprint}
                      onClick={() => {
                        setFingerprint(g.fingerprint === fingerprint ? null : g.fingerprint);
                        resetPage();
                      }}
                    >
                      {g.fingerprint && g.fingerprint === fingerprint ? "Show all" : "Show"}
                    </button>
                    <button
                      type="button"
                      className={s.button}
                      disabled={!g.fingerprint || busy}
                      onClick={() =>
                        g.fingerprint &&
                        preview("requeue", `the group ${g.fingerprint}`, {
                          ...filter,
                          fingerprint: g.fingerprint,
                        })
                      }
                    >
                      Requeue group…
                    </button>
                    <button
                      type="button"
                      className={s.button}
                      disabled={!g.fingerprint || busy}
                      onClick={() =>
                        g.fingerprint &&
                        preview("discard", `the group ${g.fingerprint}`, {
                          ...filter,
                          fingerprint: g.fingerprint,
                        })
                      }
                    >
                      Discard group…
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>
        Dead letters
        {fingerprint ? (
          <>
            {" "}
            in group <span className={s.mono}>{fingerprint}</span>
          </>
        ) : null}
      </h2>
      <div className={s.actions} style={{ marginBottom: "0.6rem" }}>
        <button
          type="button"
          className={s.button}
          disabled={selected.size === 0 || busy}
          onClick={() => preview("requeue", `${selected.size} selected`, { ids: [...selected] })}
        >
          Requeue selected ({selected.size})…
        </button>
        <button
          type="button"
          className={s.button}
          disabled={selected.size === 0 || busy}
          onClick={() => preview("discard", `${selected.size} selected`, { ids: [...selected] })}
        >
          Discard selected ({selected.size})…
        </button>
      </div>
      <table className={s.table} aria-label="Dead letters">
        <thead>
          <tr>
            <th>
              <input
                type="checkbox"
                aria-label="Select all on this page"
                checked={allChecked}
                onChange={() =>
                  setSelected(allChecked ? new Set() : new Set(items.map((d) => d.id)))
                }
              />
            </th>
            <th>Id</th>
            <th>Stage</th>
            <th>Source</th>
            <th>Code</th>
            <th>Error</th>
            <th className={s.num}>Attempts</th>
            <th>Dead for</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {items.map((d) => (
            <tr key={d.id} data-id={d.id} className={inspect === d.id ? s.selected : undefined}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select dead letter ${d.id}`}
                  checked={selected.has(d.id)}
                  onChange={() => {
                    const next = new Set(selected);
                    if (!next.delete(d.id)) next.add(d.id);
                    setSelected(next);
                  }}
                />
              </td>
              <td className={s.mono}>{d.id}</td>
              <td>{d.stage}</td>
              <td>{d.sourceId ?? "—"}</td>
              <td className={s.mono}>{d.lastError?.code ?? "—"}</td>
              <td className={s.message}>{d.lastError?.message ?? ""}</td>
              <td className={s.num}>
                {d.attempts}/{d.maxAttempts}
              </td>
              <td className={s.nowrap} title={when(d.deadAt)}>
                {age(d.deadForSeconds)}
              </td>
              <td>
                <div className={s.actions}>
                  <button type="button" className={s.button} onClick={() => setInspect(d.id)}>
                    Inspect
                  </button>
                  <button
                    type="button"
                    className={s.button}
                    disabled={busy}
                    onClick={() => preview("requeue", `dead letter ${d.id}`, { ids: [d.id] })}
                  >
                    Requeue…
                  </button>
                  <button
                    type="button"
                    className={s.button}
                    disabled={busy}
                    onClick={() => preview("discard", `dead letter ${d.id}`, { ids: [d.id] })}
                  >
                    Discard…
                  </button>
                </div>
              </td>
            </tr>
          ))}
          {list.data && items.length === 0 ? (
            <tr>
              <td colSpan={9} className="empty">
                None.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <div className={s.pager}>
        <button
          type="button"
          className={s.button}
          disabled={!cursor}
          onClick={() => setCursor(null)}
        >
          Newest
        </button>
        <button
          type="button"
          className={s.button}
          disabled={!list.data?.nextCursor}
          onClick={() => setCursor(list.data?.nextCursor ?? null)}
        >
          Older →
        </button>
      </div>

      {inspect ? <Inspector id={inspect} onClose={() => setInspect(null)} /> : null}
    </>
  );
}

function ConfirmPanel({
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

function Inspector({ id, onClose }: { id: string; onClose: () => void }) {
  const { data, error, isLoading } = useDeadLetter(id);
  return (
    <section className={s.detail} aria-label={`Dead letter ${id}`}>
      <div className={s.actions} style={{ justifyContent: "space-between" }}>
        <h2>Dead letter {id}</h2>
        <button type="button" className={s.button} onClick={onClose}>
          Close
        </button>
      </div>
      {isLoading ? <p>Loading…</p> : null}
      <ErrorNote error={error} />
      {data ? (
        <>
          <dl>
            <dt>Stage</dt>
            <dd>{data.stage}</dd>
            <dt>Key</dt>
            <dd className={s.mono}>{data.key ?? "—"}</dd>
            <dt>Source</dt>
            <dd>{data.sourceId ?? "—"}</dd>
            <dt>Fingerprint</dt>
            <dd className={s.mono}>{data.fingerprint ?? "—"}</dd>
            <dt>Attempts</dt>
            <dd>
              {data.attempts} of {data.maxAttempts}; requeued {data.requeues} times
            </dd>
            <dt>First failed</dt>
            <dd>{when(data.firstFailedAt)}</dd>
            <dt>Dead since</dt>
            <dd>{when(data.deadAt)}</dd>
            <dt>Error</dt>
            <dd>
              <span className={s.mono}>{data.lastError?.code}</span> {data.lastError?.message}
              {data.lastError?.host ? ` (host ${data.lastError.host})` : ""}
            </dd>
          </dl>
          <h3>Stack</h3>
          <pre className={s.pre}>{data.lastError?.stack ?? "(none recorded)"}</pre>
          <h3>Payload</h3>
          <pre className={s.pre}>{JSON.stringify(data.payload, null, 2)}</pre>
          <h3>Failures ({data.failures.length})</h3>
          <table className={s.table}>
            <thead>
              <tr>
                <th className={s.num}>Attempt</th>
                <th>Kind</th>
                <th>When</th>
                <th>Worker</th>
                <th>Error</th>
              </tr>
            </thead>
            <tbody>
              {data.failures.map((f) => (
                <tr key={f.id}>
                  <td className={s.num}>{f.attempt}</td>
                  <td>{f.kind}</td>
                  <td className={s.nowrap}>{when(f.failedAt)}</td>
                  <td className={s.mono}>{f.workerId ?? "—"}</td>
                  <td className={s.message}>
                    <span className={s.mono}>{f.error.code}</span> {f.error.message}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  );
}

/** "already queued as job 12", or for several "already queued as jobs 12, 14 …". */
function supersededText(r: RequeueResult): string {
  const by = [...new Set(Object.values(r.supersededBy))];
  if (by.length === 1) return `already queued as job ${by[0]}`;
  const shown = by.slice(0, 5).join(", ");
  return `already queued as jobs ${shown}${by.length > 5 ? " …" : ""}`;
}
