import s from "./deadLetters.module.css";

/** One provider's attempt as the extract stage keeps it on its failure (workers/extract/failure.ts). */
interface Attempt {
  provider?: unknown;
  model?: unknown;
  outcome?: unknown;
  correction?: unknown;
  status?: unknown;
  error?: unknown;
  rawText?: unknown;
  tokensIn?: unknown;
  tokensOut?: unknown;
  costUsd?: unknown;
}

const text = (v: unknown) => (v === null || v === undefined || v === "" ? "—" : String(v));

/**
 * What a stage kept of its failure beyond the message (JobError.detail): the extract stage's
 * attempts as a table, a provider's raw answer under each (what it said, and why it was refused);
 * any other detail as its JSON.
 */
export function FailureDetail({ detail }: { detail: unknown }) {
  if (detail === undefined || detail === null) return null;
  const d = detail as { kind?: unknown; attempts?: unknown };
  if (d.kind !== "extract" || !Array.isArray(d.attempts)) {
    return (
      <>
        <h3>Detail</h3>
        <pre className={s.pre}>{JSON.stringify(detail, null, 2)}</pre>
      </>
    );
  }
  const attempts = d.attempts as Attempt[];
  return (
    <>
      <h3>Extraction attempts ({attempts.length})</h3>
      <table className={s.table}>
        <thead>
          <tr>
            <th>Provider</th>
            <th>Model</th>
            <th>Outcome</th>
            <th className={s.num}>Status</th>
            <th className={s.num}>Tokens in / out</th>
            <th className={s.num}>Cost (USD)</th>
            <th>Error and raw answer</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((a, i) => (
            // The attempts are a fixed list in the order they were made.
            // biome-ignore lint/suspicious/noArrayIndexKey: no other identity; never reordered
            <tr key={i}>
              <td>{text(a.provider)}</td>
              <td className={s.mono}>{text(a.model)}</td>
              <td className={s.mono}>
                {text(a.outcome)}
                {a.correction === true ? " (correction)" : ""}
              </td>
              <td className={s.num}>{text(a.status)}</td>
              <td className={s.num}>
                {text(a.tokensIn)} / {text(a.tokensOut)}
              </td>
              <td className={s.num}>
                {typeof a.costUsd === "number" ? a.costUsd.toFixed(6) : "—"}
              </td>
              <td className={s.message}>
                {text(a.error)}
                {typeof a.rawText === "string" && a.rawText !== "" ? (
                  <pre className={s.pre}>{a.rawText}</pre>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
