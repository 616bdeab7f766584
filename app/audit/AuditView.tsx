"use client";

import { useState } from "react";
import s from "@/components/dashboard.module.css";
import { useAudit } from "@/components/hooks/useAudit";
import { Pager, usePages } from "@/components/ui/Pager";
import { when } from "@/lib/dashboard/format";
import own from "./audit.module.css";
import { pairsOf } from "./details";

/** Target or detail as a list of key and value, not wrapped raw JSON. */
function Pairs({ value, fallbackKey }: { value: unknown; fallbackKey: string }) {
  const pairs = pairsOf(value, fallbackKey);
  if (pairs.length === 0) return null;
  return (
    <dl className={own.pairs}>
      {pairs.map((p) => (
        <div key={p.key} className={own.pair}>
          <dt>{p.key}</dt>
          <dd>{p.value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function AuditView() {
  const [action, setAction] = useState("");
  const pages = usePages();
  const { data, error } = useAudit({ action: action || undefined, before: pages.cursor });
  return (
    <>
      <form className={s.search} onSubmit={(e) => e.preventDefault()}>
        <label>
          Action
          <select
            value={action}
            aria-label="Action"
            onChange={(e) => {
              setAction(e.target.value);
              pages.reset();
            }}
          >
            <option value="">all actions</option>
            {(data?.actions ?? []).map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
      </form>
      {error ? <p className={s.error}>{(error as Error).message}</p> : null}
      <table className={s.table} aria-label="Audit log">
        <thead>
          <tr>
            <th>When</th>
            <th>Actor</th>
            <th>Action</th>
            <th>Dry run</th>
            <th className={s.num}>Affected</th>
            <th>Target</th>
            <th>Detail</th>
          </tr>
        </thead>
        <tbody>
          {data?.entries.map((e) => (
            <tr key={e.id} data-audit-id={e.id}>
              <td className={s.nowrap}>{when(e.at)}</td>
              <td>{e.actor}</td>
              <td className={`${s.mono} ${s.nowrap}`}>{e.action}</td>
              <td>{e.dryRun ? "dry run" : ""}</td>
              <td className={s.num}>{e.affected}</td>
              <td>
                <Pairs value={e.target} fallbackKey="target" />
              </td>
              <td>
                <Pairs value={e.detail} fallbackKey="detail" />
              </td>
            </tr>
          ))}
          {data && data.entries.length === 0 ? (
            <tr>
              <td colSpan={7} className="empty">
                No admin actions{action ? ` of ${action}` : ""} yet.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <Pager pages={pages} next={data?.nextBefore} firstLabel="Newest" nextLabel="Older →" />
    </>
  );
}
