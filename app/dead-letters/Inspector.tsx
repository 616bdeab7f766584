import { useDeadLetter } from "@/components/hooks/useDeadLetters";
import { when } from "@/lib/dashboard/format";
import s from "./deadLetters.module.css";
import { ErrorNote } from "./ErrorNote";
import { FailureDetail } from "./FailureDetail";

/**
 * One dead letter in full: where it failed, the last error's detail (an extraction's attempts with
 * raw answers), its stack, its payload, every failure.
 */
export function Inspector({ id, onClose }: { id: string; onClose: () => void }) {
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
          <FailureDetail detail={data.lastError?.detail} />
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
