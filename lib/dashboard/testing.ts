import type { Database } from "@/lib/db";

/** Minutes before `now` as a Date: tests place rows inside and outside the windows with it. */
export const minutesBefore = (now: Date, minutes: number) =>
  new Date(now.getTime() - minutes * 60_000);

/** A feed source with its state row and one collector, as a sources-file sync and a poll leave it. */
export async function seedSource(
  db: Database,
  id: string,
  state: Record<string, unknown> = {},
): Promise<void> {
  await db.prisma.source.create({
    data: { id, name: `Source ${id}`, kind: "feed", url: `http://example.test/${id}.xml` },
  });
  await db.prisma.sourceState.create({ data: { sourceId: id, ...state } });
}

/** Fetch attempts for a source: `codes` in order, one a minute back from `at`. */
export async function seedAttempts(
  db: Database,
  sourceId: string,
  at: Date,
  codes: string[],
): Promise<void> {
  await db.prisma.fetchAttempt.createMany({
    data: codes.map((code, i) => ({
      sourceId,
      collector: "A",
      startedAt: minutesBefore(at, i),
      durationMs: 100,
      code,
      httpStatus: code === "ok" ? 200 : code === "not_modified" ? 304 : 503,
      notModified: code === "not_modified",
    })),
  });
}

/**
 * Two feed sources for the Sources views and their actions: "down" (breaker open after 503s,
 * validators not trusted) and "fine" (healthy, its next poll a minute ahead), each with the last
 * hour's attempts and, for "fine", two failures outside the hour that must not count.
 */
export async function seedDownAndFine(db: Database, now: Date): Promise<void> {
  await seedSource(db, "down", {
    breakerState: "open",
    breakerFailures: 5,
    breakerChangedAt: minutesBefore(now, 0.5),
    lastErrorCode: "http_503",
    lastErrorMessage: "503 Service Unavailable",
    lastErrorAt: minutesBefore(now, 0.5),
    trustsValidators: false,
  });
  await seedSource(db, "fine", { nextPollAt: new Date(now.getTime() + 60_000) });
  await db.prisma.collectorStatus.create({
    data: {
      sourceId: "fine",
      collector: "A",
      lastActivityAt: minutesBefore(now, 1),
      lastContentAt: minutesBefore(now, 2),
      usualGapSeconds: 600,
      gapsSeen: 10,
    },
  });
  await seedAttempts(db, "down", now, ["http_503", "http_503", "timeout", "ok"]);
  await seedAttempts(db, "fine", now, ["ok", "not_modified", "not_modified", "ok"]);
  // Outside the hour: not counted.
  await seedAttempts(db, "fine", minutesBefore(now, 90), ["http_500", "http_500"]);
}
