"use client";

/** Shown when a page cannot render, most often because the database is not reachable. */
export default function PageError({
  error,
  retry,
}: {
  error: Error & { digest?: string };
  retry: () => void;
}) {
  return (
    <main>
      <h1>This page could not load</h1>
      <p className="empty">
        The server could not read its data. <a href="/api/health">/api/health</a> says whether the
        database is reachable and, if not, why.
        {error.digest ? ` (error ${error.digest})` : null}
      </p>
      <button type="button" className="retry" onClick={() => retry()}>
        Try again
      </button>
    </main>
  );
}
