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
}
