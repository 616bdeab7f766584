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
