"use client";

import Link from "next/link";
import { useState } from "react";
import s from "@/components/dashboard.module.css";
import { ApiError } from "@/components/hooks/api";
import { useRepairRun, useRepairRuns, useStartRepair } from "@/components/hooks/useRepairs";
import { Pager, usePages } from "@/components/ui/Pager";
import { when } from "@/lib/dashboard/format";
import type { RepairRunView } from "@/lib/dashboard/repairs";
import { applyOffer } from "./applyOffer";
import own from "./repairs.module.css";

const show = (v: unknown) =>
  v === null || v === undefined ? "∅" : typeof v === "string" ? v : JSON.stringify(v);

export function RepairsView() {
  const runs = useRepairRuns();
  const start = useStartRepair();
  const [chosen, setChosen] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const list = runs.data?.runs ?? [];
  const active = runs.data?.activeRunId ?? null;
  const shown = chosen ?? active ?? list[0]?.id ?? null;
  const lastDry = list.find((r) => r.dryRun && r.status === "finished");
  const offer = applyOffer(list);
  const nothing = offer.kind === "nothing";

  const run = (dryRun: boolean) => {
    setConfirming(false);
    start.mutate({ dryRun }, { onSuccess: ({ runId }) => setChosen(runId) });
  };

  return (
    <>
      <div className={own.actions}>
        <button
          type="button"
          className={`${s.button} ${own.primary}`}
          disabled={!!active || start.isPending}
          onClick={() => run(true)}
        >
          Dry run
        </button>
        <button
          type="button"
          className={s.button}
          disabled={!!active || start.isPending || nothing}
          onClick={() => setConfirming(true)}
        >
          Apply…
        </button>
        {active ? <span className={s.muted}>Run {active} is running.</span> : null}
        {!active && nothing ? (
          <span className={s.muted} data-testid="nothing-to-repair">
            Nothing to repair:{" "}
            {offer.dry === list.find((r) => r.status === "finished")
              ? `the last dry run (run ${offer.dry.id}) found 0 rows that differ.`
              : "the last apply rewrote what its dry run found; run a dry run to look again."}
          </span>
        ) : null}
      </div>
      {confirming && !nothing ? (
        <section className={own.confirm} role="dialog" aria-label="Apply repair">
          <p>
            {lastDry
              ? `The last dry run (run ${lastDry.id}, ${when(lastDry.finishedAt)}) found ${lastDry.rowsChanged} row${lastDry.rowsChanged === 1 ? "" : "s"} to rewrite.`
              : "No dry run has finished yet: do one first to see what would change."}{" "}
            Applying rewrites every row that differs now, version + 1, waking nothing.
          </p>
          <div className={own.actions}>
            <button
              type="button"
              className={`${s.button} ${own.danger}`}
              onClick={() => run(false)}
            >
              Apply the repair
            </button>
            <button type="button" className={s.button} onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </section>
      ) : null}
      {start.error ? (
        <p className={s.error} role="alert">
          {start.error.message}
          {start.error instanceof ApiError && start.error.status === 401 ? (
            <>
              {" "}
              <Link href="/login">Log in</Link>
            </>
          ) : null}
        </p>
      ) : null}

      {shown ? <RunPanel id={shown} /> : <p className="empty">No repair has run yet.</p>}

      <h2>History</h2>
      <table className={s.table} aria-label="Repair runs">
        <thead>
          <tr>
            <th>Run</th>
            <th>Kind</th>
            <th>Actor</th>
            <th>Status</th>
            <th>Started</th>
            <th>Finished</th>
            <th className={s.num}>Examined</th>
            <th className={s.num}>Changed</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.map((r) => (
            <tr key={r.id} data-run-id={r.id} className={r.id === shown ? own.active : undefined}>
              <td className={s.num}>{r.id}</td>
              <td>{r.dryRun ? "dry run" : "apply"}</td>
              <td>{r.actor}</td>
              <td data-testid="run-status">{statusOf(r)}</td>
              <td className={s.nowrap}>{when(r.startedAt)}</td>
              <td className={s.nowrap}>{when(r.finishedAt)}</td>
              <td className={s.num}>
                {r.rowsExamined}/{r.rowsTotal}
              </td>
              <td className={s.num}>{r.rowsChanged}</td>
              <td>
                <button type="button" className={s.button} onClick={() => setChosen(r.id)}>
                  View
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** A "running" row no process is running was interrupted (the process stopped mid-run). */
function statusOf(r: RepairRunView): string {
  return r.status === "running" && !r.active ? "interrupted" : r.status;
}

function RunPanel({ id }: { id: string }) {
  const pages = usePages();
  const { data, error } = useRepairRun(id, pages.cursor);
  if (error) return <p className={s.error}>{(error as Error).message}</p>;
  if (!data) return <p>Loading run {id}…</p>;
  const { run, changes } = data;
  const pct = run.rowsTotal > 0 ? Math.round((100 * run.rowsExamined) / run.rowsTotal) : 100;
  return (
    <section className={s.card} aria-label={`Repair run ${run.id}`}>
      <h2>
        Run {run.id}: {run.dryRun ? "dry run" : "apply"} · {statusOf(run)}
      </h2>
      <progress
        className={own.progress}
        max={Math.max(run.rowsTotal, 1)}
        value={run.rowsTotal > 0 ? run.rowsExamined : 1}
        aria-label="Repair progress"
      />
      <p data-testid="repair-progress">
        Examined {run.rowsExamined} of {run.rowsTotal} rows ({pct}%);{" "}
        {run.dryRun ? "would change" : "changed"} {run.rowsChanged}.
        {run.error ? ` Failed: ${run.error}` : ""}
      </p>
      {changes.length === 0 ? (
        <p className="lede">
          {run.status === "running"
            ? "No differences found so far."
            : "No row differs from its observations."}
        </p>
      ) : (
        <table className={s.table} aria-label="Repair diff">
          <thead>
            <tr>
              <th>Item</th>
              <th>Field</th>
              <th>Now</th>
              <th>Rebuilt</th>
              <th>Applied</th>
            </tr>
          </thead>
          <tbody>
            {changes.flatMap((c) =>
              Object.entries(c.diff).map(([field, d], i) => (
                <tr key={`${c.id}-${field}`} data-entry-key={c.entryKey}>
                  <td className={s.mono}>
                    {i === 0 ? (
                      <Link href={`/items/${c.entryKey}`}>{c.entryKey.slice(0, 12)}…</Link>
                    ) : null}
                  </td>
                  <td>{field}</td>
                  <td className={`${s.title} ${own.from}`}>{show(d.from)}</td>
                  <td className={`${s.title} ${own.to}`}>{show(d.to)}</td>
                  <td>{i === 0 ? (c.applied ? "yes" : "no") : null}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
      <Pager pages={pages} next={data.nextAfter} firstLabel="← First" nextLabel="More changes →" />
    </section>
  );
}
