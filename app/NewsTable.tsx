import type { HeadlineJson } from "@/components/hooks/useOverview";
import { when } from "@/lib/dashboard/format";

/** The current rows. Every value is rendered as text: headlines come from outside. */
export function NewsTable({ rows }: { rows: HeadlineJson[] }) {
  if (rows.length === 0) {
    return (
      <p className="empty">
        No headlines yet. They appear here as soon as a source delivers its first item.
      </p>
    );
  }
  return (
    <table className="news">
      <thead>
        <tr>
          <th scope="col">Headline</th>
          <th scope="col">Source</th>
          <th scope="col" className="num">
            Version
          </th>
          <th scope="col">State</th>
          <th scope="col">Origin</th>
          <th scope="col" className="num">
            Audit
          </th>
          <th scope="col">Updated (UTC)</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.entryKey} data-entry-key={row.entryKey} className={row.state}>
            <td className="title">
              <Headline row={row} />
            </td>
            <td className="source" title={row.sourceId}>
              {row.sourceName}
            </td>
            <td className="num">v{row.version}</td>
            <td>
              {row.state === "retracted" ? (
                <span className="badge retracted" title="Tombstoned: retracted by the source">
                  retracted
                </span>
              ) : (
                <span className="badge live">live</span>
              )}
            </td>
            <td>
              {row.quality === "fallback" ? (
                <span className="badge fallback" title="Seen only by the page observer so far">
                  fallback-derived
                </span>
              ) : (
                <span className="badge authoritative">authoritative</span>
              )}
            </td>
            <td className="num" title="Observations recorded in news_events">
              {row.auditCount}
            </td>
            <td>
              <time dateTime={row.updatedAt}>{when(row.updatedAt)}</time>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Headline({ row }: { row: HeadlineJson }) {
  const text = row.title ?? <span className="untitled">(untitled)</span>;
  if (!row.link) return text;
  return (
    <a href={row.link} rel="noopener noreferrer nofollow" target="_blank">
      {text}
    </a>
  );
}
