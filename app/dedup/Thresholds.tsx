"use client";

import { useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import s from "@/components/dashboard.module.css";
import {
  type SettingsJson,
  useDedupRun,
  useDedupRuns,
  useDedupSettings,
  useDedupTitles,
  useSaveThresholds,
  useStartDedupRun,
} from "@/components/hooks/useDedup";
import { Pager, usePages } from "@/components/ui/Pager";
import { when } from "@/lib/dashboard/format";
import type { DedupThresholds } from "@/lib/dedup/thresholds";
import type { DedupRunView, LinkSide, RunChange } from "@/workers/admin/dedupRerun";
import own from "./dedup.module.css";
import { ActionError } from "./ReviewQueue";

/** The thresholds a person edits, in the order the cascade uses them, with what each does. */
const FIELDS = [
  {
    path: ["windowHours"],
    label: "Window (hours)",
    step: "1",
    help: "compare items first seen this close",
  },
  {
    path: ["retrieval", "radius"],
    label: "Band radius (bits)",
    step: "1",
    help: "0–2: how far a band lookup reaches",
  },
  {
    path: ["retrieval", "maxHamming"],
    label: "Max SimHash distance",
    step: "1",
    help: "0–64: candidates further are dropped",
  },
  {
    path: ["retrieval", "anchors"],
    label: "Anchors per item",
    step: "1",
    help: "0–16 distinctive word stems looked up; 0: off",
  },
  {
    path: ["retrieval", "minShared"],
    label: "Anchors shared to compare",
    step: "1",
    help: "1–16, at most the anchors per item",
  },
  {
    path: ["retrieval", "postingCap"],
    label: "Rows read per anchor",
    step: "1",
    help: "1–4096, the newest in the window",
  },
  { path: ["near", "duplicate"], label: "Near: link at score ≥", step: "0.01", help: "0–1" },
  {
    path: ["near", "review"],
    label: "Near: review at score ≥",
    step: "0.01",
    help: "0–1, the grey band's floor",
  },
] as const;

const key = (path: readonly string[]) => path.join(".");

function read(t: unknown, path: readonly string[]): unknown {
  let v: unknown = t;
  for (const p of path)
    v = v && typeof v === "object" ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

/** The form's text back into thresholds; the server's zod schema says what is out of range. */
function build(base: DedupThresholds, values: Record<string, string>): DedupThresholds {
  const out = structuredClone(base) as unknown as Record<string, unknown>;
  for (const f of FIELDS) {
    let at = out;
    for (const p of f.path.slice(0, -1)) {
      at[p] = { ...((at[p] as Record<string, unknown>) ?? {}) };
      at = at[p] as Record<string, unknown>;
    }
    const raw = values[key(f.path)] ?? "";
    at[f.path[f.path.length - 1] as string] = raw.trim() === "" ? Number.NaN : Number(raw);
  }
  return out as unknown as DedupThresholds;
}

const formOf = (t: DedupThresholds): Record<string, string> =>
  Object.fromEntries(FIELDS.map((f) => [key(f.path), String(read(t, f.path) ?? "")]));

export function Thresholds() {
  const settings = useDedupSettings();
  const runsPages = usePages();
  const runs = useDedupRuns(runsPages.cursor);
  const start = useStartDedupRun();
  const save = useSaveThresholds();
  const [chosen, setChosen] = useState<string | null>(null);
  const [values, setValues] = useState<Record<string, string> | null>(null);
  const [confirm, setConfirm] = useState<"save" | "apply" | null>(null);
  const current = settings.data;
  // The form starts from the thresholds in force, and follows them until edited.
  useEffect(() => {
    if (current && values === null) setValues(formOf(current.thresholds));
  }, [current, values]);

  const list = runs.data?.runs ?? [];
  const active = runs.data?.activeRunId ?? null;
  // A run that ends moves links and maybe the thresholds in force: read everything again.
  const client = useQueryClient();
  const wasActive = useRef<string | null>(null);
  useEffect(() => {
    if (wasActive.current && !active) void client.invalidateQueries({ queryKey: ["dedup"] });
    wasActive.current = active;
  }, [active, client]);
  const shown = chosen ?? active ?? list[0]?.id ?? null;
  const shownRun = list.find((r) => r.id === shown) ?? null;

  if (!current || !values) return <p>Loading thresholds…</p>;
  const edited = build(current.thresholds, values);
  const changed = FIELDS.filter(
    (f) => String(read(current.thresholds, f.path)) !== (values[key(f.path)] ?? "").trim(),
  );

  const dryRun = () =>
    start.mutate(
      { dryRun: true, thresholds: edited },
      { onSuccess: ({ runId }) => setChosen(runId) },
    );
  const apply = (id: string) => {
    setConfirm(null);
    start.mutate({ applyRun: id }, { onSuccess: ({ runId }) => setChosen(runId) });
  };

  return (
    <section aria-label="Thresholds">
      <h2>Thresholds and re-runs</h2>
      <p className="lede">
        In force: revision {current.revision}
        {current.origin === "default"
          ? " (the shipped defaults)"
          : `, ${current.updatedBy ? `set by ${current.updatedBy}` : "written by the stage"} at ${when(current.updatedAt)}`}
        . Edit them and do a dry run to see which links would appear or go; applying that run makes
        them and puts its thresholds in force. Saving without a re-run changes only the decisions to
        come.
      </p>
      <form
        className={own.form}
        aria-label="Thresholds"
        onSubmit={(e) => {
          e.preventDefault();
          dryRun();
        }}
      >
        {FIELDS.map((f) => {
          const k = key(f.path);
          const isChanged = changed.includes(f);
          return (
            <label key={k}>
              {f.label}
              <input
                name={k}
                type="number"
                step={f.step}
                inputMode="decimal"
                value={values[k] ?? ""}
                className={isChanged ? own.changed : undefined}
                onChange={(e) => setValues({ ...values, [k]: e.target.value })}
              />
              <span>
                {f.help}; default {String(read(current.defaults, f.path))}
              </span>
            </label>
          );
        })}
      </form>
      <div className={own.toolbar}>
        <button
          type="button"
          className={`${s.button} ${own.primary}`}
          disabled={!!active || start.isPending}
          onClick={dryRun}
        >
          Dry run with these
        </button>
        <button
          type="button"
          className={s.button}
          disabled={changed.length === 0 || save.isPending}
          onClick={() => setConfirm("save")}
        >
          Save without re-run…
        </button>
        <button
          type="button"
          className={s.button}
          disabled={changed.length === 0}
          onClick={() => setValues(formOf(current.thresholds))}
        >
          Reset
        </button>
        {active ? <span className={s.muted}>Run {active} is running.</span> : null}
      </div>
      {confirm === "save" ? (
        <section className={own.confirm} role="dialog" aria-label="Save thresholds">
          <p>
            Put {changed.map((f) => f.label).join(", ")} in force for the stage's next decisions?
            Links already made stay as they are until a re-run is applied.
          </p>
          <div className={own.toolbar}>
            <button
              type="button"
              className={`${s.button} ${own.danger}`}
              onClick={() => {
                setConfirm(null);
                save.mutate(
                  { thresholds: edited, expectedRevision: current.revision },
                  { onSuccess: (r) => setValues(formOf(r.thresholds)) },
                );
              }}
            >
              Save thresholds
            </button>
            <button type="button" className={s.button} onClick={() => setConfirm(null)}>
              Cancel
            </button>
          </div>
        </section>
      ) : null}
      {start.error ? <ActionError error={start.error} /> : null}
      {save.error ? <ActionError error={save.error} /> : null}

      {shown ? (
        <RunPanel
          id={shown}
          current={current}
          canApply={!active && !start.isPending}
          confirming={confirm === "apply"}
          onApply={() => setConfirm("apply")}
          onConfirm={() => apply(shown)}
          onCancel={() => setConfirm(null)}
        />
      ) : (
        <p className="empty">No re-run yet.</p>
      )}

      <h3>Run history</h3>
      <div className={own.scroll}>
        <table className={s.table} aria-label="Dedup runs">
          <thead>
            <tr>
              <th>Run</th>
              <th>Kind</th>
              <th>Actor</th>
              <th>State</th>
              <th>Started</th>
              <th className={s.num}>Scanned</th>
              <th className={s.num}>Appear</th>
              <th className={s.num}>Go</th>
              <th className={s.num}>Change</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.map((r) => (
              <tr key={r.id} data-run-id={r.id} className={r.id === shown ? own.active : undefined}>
                <td className={s.num}>{r.id}</td>
                <td>{r.dryRun ? "dry run" : "apply"}</td>
                <td>{r.actor}</td>
                <td data-testid="run-state">{stateOf(r)}</td>
                <td className={s.nowrap}>{when(r.startedAt)}</td>
                <td className={s.num}>
                  {r.scanned}/{r.total}
                </td>
                <td className={s.num}>{r.appear}</td>
                <td className={s.num}>{r.go}</td>
                <td className={s.num}>{r.change}</td>
                <td>
                  <button type="button" className={s.button} onClick={() => setChosen(r.id)}>
                    View
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager
        pages={runsPages}
        next={runs.data?.nextBefore}
        firstLabel="← Newest"
        nextLabel="Older →"
      />
      {shownRun && shownRun.state === "failed" ? (
        <p className={s.error}>
          Run {shownRun.id} failed: {shownRun.error}
        </p>
      ) : null}
    </section>
  );
}

/** A "running" row no process is running was interrupted (the process stopped mid-run). */
const stateOf = (r: DedupRunView) => (r.state === "running" && !r.active ? "interrupted" : r.state);

/** The thresholds a run used that differ from those in force now. */
function differences(run: DedupRunView, current: SettingsJson): string {
  const diffs = FIELDS.filter(
    (f) => String(read(run.thresholds, f.path)) !== String(read(current.thresholds, f.path)),
  ).map((f) => `${f.label} ${String(read(run.thresholds, f.path))}`);
  return diffs.length ? diffs.join(", ") : "the thresholds in force";
}

type Titles = Record<string, { title: string | null; sourceId: string }>;

const headline = (key: string, titles: Titles) => {
  const t = titles[key];
  return t?.title ? `“${t.title}” (${t.sourceId})` : `${key.slice(0, 12)}…`;
};

function linkText(side: RunChange["before"] | RunChange["after"], titles: Titles): string {
  if (!side || !("stage" in side)) return "alone";
  const l = side as LinkSide;
  const score = l.stage === "url" || l.stage === "exact" ? "" : ` ${l.score.toFixed(2)}`;
  return `${l.stage}${score} to ${headline(l.matchedKey, titles)}`;
}

const matched = (side: RunChange["before"] | RunChange["after"]) =>
  side && "matchedKey" in side && typeof side.matchedKey === "string" ? [side.matchedKey] : [];

function RunPanel({
  id,
  current,
  canApply,
  confirming,
  onApply,
  onConfirm,
  onCancel,
}: {
  id: string;
  current: SettingsJson;
  canApply: boolean;
  confirming: boolean;
  onApply: () => void;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const pages = usePages();
  const { data, error } = useDedupRun(id, pages.cursor);
  const keys = (data?.changes ?? []).flatMap((c) => [
    c.entryKey,
    ...matched(c.before),
    ...matched(c.after),
  ]);
  const titles = useDedupTitles(keys.slice(0, 200)).data?.titles ?? {};
  if (error) return <p className={s.error}>{error.message}</p>;
  if (!data) return <p>Loading run {id}…</p>;
  const { run, changes } = data;
  const found = run.appear + run.go + run.change;
  // A dry run scans; an apply writes what its dry run found.
  const [done, of] = run.dryRun ? [run.scanned, run.total] : [run.applied, found];
  const pct = of > 0 ? Math.round((100 * done) / of) : run.state === "running" ? 0 : 100;
  const applicable = run.dryRun && run.state === "finished" && found > 0;
  return (
    <section className={s.card} aria-label={`Dedup run ${run.id}`}>
      <h3>
        Run {run.id}: {run.dryRun ? "dry run" : "apply"} · {stateOf(run)}
      </h3>
      <p className={s.muted}>With {differences(run, current)}.</p>
      <progress
        className={own.progress}
        max={Math.max(of, 1)}
        value={of > 0 ? done : pct / 100}
        aria-label="Run progress"
      />
      <p data-testid="run-progress">
        {run.dryRun
          ? `Scanned ${run.scanned} of ${run.total} items`
          : `Applied ${run.applied} of ${found} changes`}{" "}
        ({pct}%): {run.appear} link{run.appear === 1 ? "" : "s"}{" "}
        {run.dryRun ? "would appear" : "appear"}, {run.go} {run.dryRun ? "would go" : "go"},{" "}
        {run.change} {run.dryRun ? "would change" : "change"}.
        {run.error ? ` Failed: ${run.error}` : ""}
      </p>
      {applicable ? (
        <div className={own.toolbar}>
          <button type="button" className={s.button} disabled={!canApply} onClick={onApply}>
            Apply…
          </button>
        </div>
      ) : null}
      {confirming && applicable ? (
        <section className={own.confirm} role="dialog" aria-label="Apply dedup run">
          <p>
            Apply run {run.id}: {run.appear} link{run.appear === 1 ? "" : "s"} made, {run.go} ended,{" "}
            {run.change} re-pointed, and its thresholds put in force. Items whose version moved
            since the dry run are skipped. Nothing downstream is woken.
          </p>
          <div className={own.toolbar}>
            <button type="button" className={`${s.button} ${own.danger}`} onClick={onConfirm}>
              Apply the run
            </button>
            <button type="button" className={s.button} onClick={onCancel}>
              Cancel
            </button>
          </div>
        </section>
      ) : null}
      {changes.length === 0 ? (
        <p className="lede">
          {run.state === "running" ? "No differences found so far." : "No link would change."}
        </p>
      ) : (
        <div className={own.scroll}>
          <table className={s.table} aria-label="Run diff">
            <thead>
              <tr>
                <th>Change</th>
                <th>Item</th>
                <th>Now</th>
                <th>With these thresholds</th>
                <th>Applied</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((c) => {
                const after = c.after as { applied?: boolean; skipped?: string } | null;
                return (
                  <tr key={c.entryKey} data-entry-key={c.entryKey} data-change={c.change}>
                    <td
                      className={
                        c.change === "appear" ? own.appear : c.change === "go" ? own.go : undefined
                      }
                    >
                      {c.change}
                    </td>
                    <td className={s.title}>
                      <Link href={`/items/${c.entryKey}`}>
                        {titles[c.entryKey]?.title ?? `${c.entryKey.slice(0, 12)}…`}
                      </Link>
                      {titles[c.entryKey] ? (
                        <div className={s.muted}>{titles[c.entryKey]?.sourceId}</div>
                      ) : null}
                    </td>
                    <td className={s.title}>{linkText(c.before, titles)}</td>
                    <td className={s.title}>{linkText(c.after, titles)}</td>
                    <td>
                      {after?.applied === undefined
                        ? "—"
                        : after.applied
                          ? "yes"
                          : `skipped${after.skipped ? `: ${after.skipped}` : ""}`}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} next={data.nextAfter} firstLabel="← First" nextLabel="More changes →" />
    </section>
  );
}
