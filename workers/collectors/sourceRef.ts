/** What a collector needs to know of its source (a row of `sources`). */
export interface SourceRef {
  id: string;
  kind: string;
  url: string;
  allowPrivate: boolean;
  pollIntervalSeconds: number;
  backfillUrl: string | null;
  /** For a page: the source whose items it shows; observations are written under it. */
  observes: string | null;
  /** A page: read as served ("http") or rendered in headless Chromium first ("browser"). */
  render: "http" | "browser";
}

/** A `sources` row as a collector sees it (a source without a URL has nothing to collect). */
export function toSourceRef(row: {
  id: string;
  kind: string;
  url: string | null;
  allowPrivate: boolean;
  pollIntervalSeconds: number;
  backfillUrl: string | null;
  observes: string | null;
  render?: string;
}): SourceRef | null {
  if (!row.url) return null;
  return {
    id: row.id,
    kind: row.kind,
    url: row.url,
    allowPrivate: row.allowPrivate,
    pollIntervalSeconds: row.pollIntervalSeconds,
    backfillUrl: row.backfillUrl,
    observes: row.observes,
    render: row.render === "browser" ? "browser" : "http",
  };
}
