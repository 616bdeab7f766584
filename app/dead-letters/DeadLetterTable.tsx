import type { Wire } from "@/components/hooks/useDeadLetters";
import { age, when } from "@/lib/dashboard/format";
import type { DeadLetter } from "@/workers/queue/deadLetters";
import type { Preview } from "./ConfirmDialog";
import s from "./deadLetters.module.css";

/** One page of dead letters, newest first, each selectable, with actions on the selection. */
export function DeadLetterTable({
  items,
  loaded,
  selected,
  onSelect,
  inspecting,
  onInspect,
  busy,
  preview,
}: {
  items: Wire<DeadLetter>[];
  /** The page has arrived (so an empty one says so). */
  loaded: boolean;
  selected: Set<string>;
  onSelect: (ids: Set<string>) => void;
  inspecting: string | null;
  onInspect: (id: string) => void;
  busy: boolean;
  preview: Preview;
}) {
  const allChecked = items.length > 0 && items.every((d) => selected.has(d.id));
  return (
    <>
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
                onChange={() => onSelect(allChecked ? new Set() : new Set(items.map((d) => d.id)))}
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
            <tr key={d.id} data-id={d.id} className={inspecting === d.id ? s.selected : undefined}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select dead letter ${d.id}`}
                  checked={selected.has(d.id)}
                  onChange={() => {
                    const next = new Set(selected);
                    if (!next.delete(d.id)) next.add(d.id);
                    onSelect(next);
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
                  <button type="button" className={s.button} onClick={() => onInspect(d.id)}>
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
          {loaded && items.length === 0 ? (
            <tr>
              <td colSpan={9} className="empty">
                None.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </>
  );
}
