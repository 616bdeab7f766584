import { getDb } from "@/lib/db";
import { type Health, sourceHealth } from "@/workers/collectors/health";

/** A stream is expected to send a keepalive at least this often (the usual 5–15 s, with room). */
const STREAM_KEEPALIVE_SECONDS = 15;
/** A learned usual gap is trusted after this many gaps; before that one is assumed. */
const GAPS_TO_LEARN = 5;

export interface SourceHealthRow {
  id: string;
  name: string;
  kind: string;
  health: Health;
  breakerState: string;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  /** Fetch attempts in the last hour, and how many were errors and 304s. */
  attempts: number;
  errors: number;
  notModified: number;
  nextPollAt: Date | null;
}

/** Every source with its health and the last hour of fetching, in three queries. */
export async function sourcesHealth(now = new Date()): Promise<SourceHealthRow[]> {
  const { prisma } = await getDb();
  const sources = await prisma.source.findMany({
    orderBy: { id: "asc" },
    include: { state: true, collectorStatus: true },
  });
  const hourAgo = new Date(now.getTime() - 3_600_000);
  const attempts = await prisma.fetchAttempt.groupBy({
    by: ["sourceId", "code"],
    where: { startedAt: { gte: hourAgo } },
    _count: { _all: true },
  });
  const tally = new Map<string, { attempts: number; errors: number; notModified: number }>();
  for (const a of attempts) {
    const t = tally.get(a.sourceId) ?? { attempts: 0, errors: 0, notModified: 0 };
    t.attempts += a._count._all;
    if (a.code === "not_modified") t.notModified += a._count._all;
    else if (a.code !== "ok") t.errors += a._count._all;
    tally.set(a.sourceId, t);
  }
  return sources.map((s) => {
    const health = sourceHealth(
      {
        kind: s.kind,
        enabled: s.enabled,
        disabledReason: s.state?.disabledReason ?? null,
        breakerState: s.state?.breakerState ?? "closed",
        lastErrorAt: s.state?.lastErrorAt ?? null,
        lastErrorCode: s.state?.lastErrorCode ?? null,
        activityIntervalSeconds:
          s.kind === "stream" ? STREAM_KEEPALIVE_SECONDS : s.pollIntervalSeconds,
        collectors: s.collectorStatus.map((c) => ({
          collector: c.collector,
          lastActivityAt: c.lastActivityAt,
          lastContentAt: c.lastContentAt,
          usualGapSeconds: c.gapsSeen >= GAPS_TO_LEARN ? c.usualGapSeconds : null,
        })),
      },
      now,
    );
    return {
      id: s.id,
      name: s.name,
      kind: s.kind,
      health,
      breakerState: s.state?.breakerState ?? "closed",
      lastErrorCode: s.state?.lastErrorCode ?? null,
      lastErrorMessage: s.state?.lastErrorMessage ?? null,
      ...(tally.get(s.id) ?? { attempts: 0, errors: 0, notModified: 0 }),
      nextPollAt: s.kind === "stream" ? null : (s.state?.nextPollAt ?? null),
    };
  });
}
