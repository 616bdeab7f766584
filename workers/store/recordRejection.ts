import { createHash } from "node:crypto";
import type { Database } from "@/lib/db";
import type { WriteKind } from "./observation";
import type { WriteOutcome } from "./writeObservation";

// A rejected payload is kept as evidence, but a hostile one (a 10 MB title) must not bloat the
// audit table: each string is kept up to this many characters, with the full size and hash.
const KEEP_CHARS = 4_096;

/** Records an observation the writer refused, with the reason, so nothing is silently dropped. */
export async function recordRejection(
  db: Database,
  input: unknown,
  kind: WriteKind,
  reason: string,
  entryKey: string | null = null,
): Promise<WriteOutcome> {
  const raw = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const short = (v: unknown, max: number) =>
    typeof v === "string" && v.length > 0 ? sanitize(v).slice(0, max) : null;
  const payload = JSON.stringify({ rejected: boundedCopy(input), kind });
  const observedAt =
    raw.observedAt instanceof Date && !Number.isNaN(raw.observedAt.getTime())
      ? raw.observedAt
      : new Date();
  const rows = await db.prisma.$queryRaw<{ id: bigint }[]>`
    INSERT INTO news_events (entry_key, source_id, collector, origin, kind, observed_at, payload, result, reason)
    VALUES (${entryKey}, ${short(raw.sourceId, 200) ?? "(none)"}, ${short(raw.collector, 100) ?? "(none)"},
            ${short(raw.origin, 32) ?? "(none)"}, ${kind}, ${observedAt}, ${payload}::jsonb, 'rejected',
            ${reason.slice(0, 2_000)})
    RETURNING id`;
  return {
    eventId: BigInt(rows[0]?.id ?? 0),
    result: "rejected",
    entryKey: entryKey ?? "",
    version: null,
    notified: false,
    reason,
  };
}

/** Strips what Postgres text cannot hold (NUL, unpaired surrogates). */
function sanitize(s: string): string {
  return s.toWellFormed().replaceAll("\u0000", "\uFFFD");
}

/** A JSON-safe, size-bounded copy of arbitrary input. */
function boundedCopy(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value === "string") {
    if (value.length <= KEEP_CHARS) return sanitize(value);
    return {
      truncated: sanitize(value.slice(0, KEEP_CHARS)),
      length: value.length,
      sha256: createHash("sha256").update(value.toWellFormed()).digest("hex"),
    };
  }
  if (typeof value === "number" || typeof value === "boolean") return value;
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Date)
    return Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString();
  if (depth > 4) return "[nested too deep]";
  if (Array.isArray(value)) return value.slice(0, 200).map((v) => boundedCopy(v, depth + 1));
  if (typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .slice(0, 100)
        .map(([k, v]) => [sanitize(k).slice(0, 200), boundedCopy(v, depth + 1)]),
    );
  }
  return String(value);
}
