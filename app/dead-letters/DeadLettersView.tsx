"use client";

import { useMemo, useState } from "react";
import {
  type DeadLetterQuery,
  type DeadLetterSelection,
  useDeadLetterGroups,
  useDeadLetters,
  useDiscardDeadLetters,
  useRequeueDeadLetters,
} from "@/components/hooks/useDeadLetters";
import { Pager, usePages } from "@/components/ui/Pager";
import { age } from "@/lib/dashboard/format";
import { ConfirmDialog, type Pending, type Preview, supersededText } from "./ConfirmDialog";
import { DeadLetterTable } from "./DeadLetterTable";
import s from "./deadLetters.module.css";
import { ErrorNote } from "./ErrorNote";
import { type FilterFields, Filters, NO_FILTER } from "./Filters";
import { GroupsTable } from "./GroupsTable";
import { Inspector } from "./Inspector";

/** Depth, groups by cause and the dead letters themselves; every action is a dry run first. */
export function DeadLettersView() {
  const [fields, setFields] = useState<FilterFields>(NO_FILTER);
  const [fingerprint, setFingerprint] = useState<string | null>(null);
  const pages = usePages();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [inspect, setInspect] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const filter: DeadLetterQuery = useMemo(
    () => ({
      stage: fields.stage || undefined,
      source: fields.source.trim() || undefined,
      code: fields.code.trim() || undefined,
      from: fields.from,
    }),
    [fields],
  );
  const listFilter = useMemo(
    () => ({ ...filter, fingerprint: fingerprint ?? undefined }),
    [filter, fingerprint],
  );
  const groups = useDeadLetterGroups(filter);
  const list = useDeadLetters(listFilter, pages.cursor);
  const requeue = useRequeueDeadLetters();
  const discard = useDiscardDeadLetters();
  const busy = requeue.isPending || discard.isPending;
  const actionError = requeue.error ?? discard.error;

  const resetPage = () => {
    pages.reset();
    setSelected(new Set());
  };

  const preview: Preview = (kind, label, filterOf) => {
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
      resetPage();
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
  const filtered = Boolean(fields.from || fields.stage || fields.source || fields.code);

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

      <Filters
        fields={fields}
        stages={stats?.byStage.map((b) => b.stage) ?? []}
        onChange={(next) => {
          setFields(next);
          resetPage();
        }}
      />

      {notice ? (
        <p className={s.notice} role="status">
          {notice}
        </p>
      ) : null}
      <ErrorNote error={actionError ?? groups.error ?? list.error} />

      {pending ? (
        <ConfirmDialog
          pending={pending}
          busy={busy}
          onConfirm={confirm}
          onCancel={() => setPending(null)}
        />
      ) : null}

      <h2>Groups by cause</h2>
      {stats && stats.groups.length === 0 ? (
        <p className="empty">No dead letters{filtered ? " match" : ""}.</p>
      ) : (
        <GroupsTable
          groups={stats?.groups}
          filter={filter}
          fingerprint={fingerprint}
          busy={busy}
          onShow={(next) => {
            setFingerprint(next);
            resetPage();
          }}
          preview={preview}
        />
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
      <DeadLetterTable
        items={list.data?.items ?? []}
        loaded={list.data !== undefined}
        selected={selected}
        onSelect={setSelected}
        inspecting={inspect}
        onInspect={setInspect}
        busy={busy}
        preview={preview}
      />
      <Pager pages={pages} next={list.data?.nextCursor} firstLabel="Newest" nextLabel="Older →" />

      {inspect ? <Inspector id={inspect} onClose={() => setInspect(null)} /> : null}
    </>
  );
}
