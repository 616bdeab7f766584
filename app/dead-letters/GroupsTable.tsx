import type { DeadLetterQuery, Wire } from "@/components/hooks/useDeadLetters";
import { when } from "@/lib/dashboard/format";
import type { DeadLetterStats } from "@/workers/queue/deadLetters";
import type { Preview } from "./ConfirmDialog";
import s from "./deadLetters.module.css";

/**
 * Dead letters grouped by cause (fingerprint), largest first: Show narrows the list below to a
 * group; a group's requeue or discard acts on it within `filter`.
 */
export function GroupsTable({
  groups,
  filter,
  fingerprint,
  busy,
  onShow,
  preview,
}: {
  groups: Wire<DeadLetterStats>["groups"] | undefined;
  filter: DeadLetterQuery;
  /** The group the list is narrowed to. */
  fingerprint: string | null;
  busy: boolean;
  onShow: (fingerprint: string | null) => void;
  preview: Preview;
}) {
  return (
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
        {groups?.map((g) => (
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
                  onClick={() => onShow(g.fingerprint === fingerprint ? null : g.fingerprint)}
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
  );
}
