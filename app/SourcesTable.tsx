import type { SourceHealthRow } from "./sourceHealth";

const percent = (part: number, whole: number) =>
  whole ? `${Math.round((100 * part) / whole)}%` : "–";

/** Sources and their health; every string from a source is rendered as text. */
export function SourcesTable({ rows }: { rows: SourceHealthRow[] }) {
  if (rows.length === 0) {
    return <p className="empty">No sources configured yet.</p>;
  }
  return (
    <table className="sources">
      <thead>
        <tr>
          <th scope="col">Source</th>
          <th scope="col">Kind</th>
          <th scope="col">Health</th>
          <th scope="col">Why</th>
          <th scope="col">Breaker</th>
          <th scope="col" className="num" title="Fetch errors in the last hour">
            Errors
          </th>
          <th scope="col" className="num" title="304 Not Modified share in the last hour">
            304
          </th>
          <th scope="col">Last error</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id} data-source-id={row.id}>
            <td className="source" title={row.id}>
              {row.name}
            </td>
            <td>{row.kind}</td>
            <td>
              <span className={`badge health-${row.health.state}`}>{row.health.state}</span>
            </td>
            <td className="reason">{row.health.reason}</td>
            <td>{row.breakerState.replace("_", "-")}</td>
            <td className="num">{percent(row.errors, row.attempts)}</td>
            <td className="num">{percent(row.notModified, row.attempts)}</td>
            <td className="reason" title={row.lastErrorMessage ?? undefined}>
              {row.lastErrorCode ?? ""}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
