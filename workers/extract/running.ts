/**
 * The chain the extract stage of this process runs, for the dashboard (the Costs page's backfill
 * progress). On globalThis, not a module variable: Next bundles instrumentation.ts (which starts
 * the workers) and the route handlers separately, so a module variable would be two (as the
 * embedded database's one instance is shared, lib/db.ts).
 */
const KEY = Symbol.for("wirewatch.extract.running");
type Holder = { [KEY]?: string | null };

/** The running chain's id (Extractor.id), or null when no extract stage runs in this process. */
export function runningExtractorId(): string | null {
  return (globalThis as Holder)[KEY] ?? null;
}

/** Set by the extract line when it starts (its id) and stops (null). */
export function setRunningExtractorId(id: string | null): void {
  (globalThis as Holder)[KEY] = id;
}
