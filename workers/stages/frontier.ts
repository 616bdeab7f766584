import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { toSourceRef } from "@/workers/collectors/sourceRef";
import { dropWaiting } from "@/workers/queue/dropWaiting";
import { enqueue, type JobInput } from "@/workers/queue/enqueue";
import { urlHost } from "@/workers/queue/jobError";
import { catchUpKey, STORY_QUEUE } from "@/workers/stories/queue";

/** The stage queues ingestion runs on (the spec's fetch → parse/clean → store, seed 002). */
export const FETCH_QUEUE = "fetch";
export const STREAM_QUEUE = "stream";

/** A collector's job: which source, by which collector; the rest is state between runs. */
export type CollectorPayload = {
  sourceId: string;
  collector: string;
  /** For failure fingerprints (a source id is not a host). */
  host?: string;
  bodyHash?: string | null;
  failures?: number;
  /** Epoch ms until which the source is hot (polled 4× as often, claimed first). */
  hotUntil?: number;
  /** A poll of this source and collector has ended before (its first finds everything new). */
  polledBefore?: boolean;
};

/** What the frontier reads of a source: the fields a job's payload and spread depend on. */
interface FrontierRow {
  id: string;
  kind: string;
  url: string | null;
  allowPrivate: boolean;
  pollIntervalSeconds: number;
  backfillUrl: string | null;
  observes: string | null;
  render: string;
  collectors: string[];
}

/**
 * The frontier, from the sources table: one recurring `fetch` job per enabled feed or page
 * source and collector name, one long-running `stream` job per stream source and collector, one
 * recurring catch-up job per story-api source on the `story` queue.
 * Only the difference is written: jobs wanted and not live are added (their first polls spread,
 * spreadFirstPolls), waiting jobs no longer wanted are deleted (not requeued dead letters), and
 * the rest keep their due time and state; a running one ends itself when its handler finds its
 * source gone. Read narrow (one row of nine columns per source), so 100,000 sources cost a few
 * hundred milliseconds of a process's time, not the tens of seconds whole rows with their state
 * took, which held up its polls meanwhile. Every ingestion process runs this now and then; they
 * agree (enqueue is keyed "source/collector").
 */
export async function syncFrontier(
  db: Database,
): Promise<{ fetch: string[]; stream: string[]; story: string[] }> {
  const sources = await db.prisma.$queryRaw<FrontierRow[]>`
    SELECT s.id, s.kind, s.url, s.allow_private AS "allowPrivate",
           s.poll_interval_seconds AS "pollIntervalSeconds", s.backfill_url AS "backfillUrl",
           s.observes, s.render, s.collectors
    FROM sources s LEFT JOIN source_state st ON st.source_id = s.id
    WHERE s.enabled AND s.kind IN ('feed', 'page', 'stream') AND s.url IS NOT NULL
      AND st.disabled_reason IS NULL`;
  const wanted: Record<string, JobInput[]> = { [FETCH_QUEUE]: [], [STREAM_QUEUE]: [] };
  for (const s of sources) {
    const ref = toSourceRef(s);
    if (!ref) continue;
    const queue = ref.kind === "stream" ? STREAM_QUEUE : FETCH_QUEUE;
    for (const collector of s.collectors) {
      const payload: CollectorPayload = { sourceId: s.id, collector, host: urlHost(ref.url) };
      wanted[queue]?.push({
        key: `${s.id}/${collector}`,
        sourceId: s.id,
        payload,
        maxAttempts: 10,
      });
    }
  }
  const intervals = new Map(sources.map((s) => [s.id, s.pollIntervalSeconds]));
  const keys: Record<string, string[]> = {};
  for (const [queue, jobs] of Object.entries(wanted)) {
    keys[queue] = jobs.map((j) => j.key as string);
    const live = await liveJobs(db, queue);
    const fresh = jobs.filter((j) => !live.has(j.key as string));
    await enqueue(
      db,
      queue,
      queue === FETCH_QUEUE ? spreadFirstPolls(fresh, new Set(), intervals) : fresh,
    );
    const want = new Set(keys[queue]);
    // Not a dead letter an admin requeued (requeues > 0): that run was asked for and audited, so
    // it happens (its handler ends it if the source is not wanted) instead of vanishing unrun.
    const unwanted = [...live]
      .filter(([key, job]) => !want.has(key) && job.state === "ready" && job.requeues === 0)
      .map(([key]) => key);
    if (unwanted.length > 0) {
      await dropWaiting(
        db,
        Prisma.sql`queue = ${queue} AND requeues = 0 AND key = ANY(${unwanted}::text[])`,
      );
    }
  }
  // The story queue also holds webhook events: only catch-up jobs of sources gone are deleted.
  const stories = await db.prisma.source.findMany({
    where: {
      enabled: true,
      kind: "story-api",
      url: { not: null },
      OR: [{ state: null }, { state: { disabledReason: null } }],
    },
    select: { id: true },
  });
  const catchUps = stories.map((s) => catchUpKey(s.id));
  await enqueue(
    db,
    STORY_QUEUE,
    stories.map((s) => ({
      key: catchUpKey(s.id),
      sourceId: s.id,
      payload: { kind: "catchup", sourceId: s.id },
      maxAttempts: 10,
    })),
  );
  await dropWaiting(
    db,
    Prisma.sql`queue = ${STORY_QUEUE} AND key LIKE 'catchup:%' AND NOT (key = ANY(${catchUps}::text[]))`,
  );
  return { fetch: keys[FETCH_QUEUE] ?? [], stream: keys[STREAM_QUEUE] ?? [], story: catchUps };
}

/**
 * What the frontier is made from, summed into one row inside the database: every source's
 * fields the jobs depend on (an order-free sum of their hashes, so any edit shows, whoever made
 * it), the sources switched off by state, and the jobs live on the queues it fills. While it
 * stays the same a periodic sync has nothing to do, so a process skips it: tens of milliseconds
 * of database time at 100,000 sources, against seconds for a sync that reads every source into
 * the process and writes every key.
 */
export async function frontierFingerprint(db: Database): Promise<string> {
  const [row] = await db.prisma.$queryRaw<{ fingerprint: string }[]>`
    SELECT concat_ws('|',
      (SELECT concat(count(*), ':', sum(hashtextextended(
                concat_ws('|', id, kind, url, enabled, collectors::text), 0)))
       FROM sources),
      (SELECT concat(count(*), ':', sum(hashtextextended(
                concat_ws('|', source_id, disabled_reason), 0)))
       FROM source_state WHERE disabled_reason IS NOT NULL),
      (SELECT count(*) FROM jobs WHERE state IN ('ready', 'leased')
         AND (queue IN (${FETCH_QUEUE}, ${STREAM_QUEUE})
              OR (queue = ${STORY_QUEUE} AND key LIKE 'catchup:%')))) AS fingerprint`;
  return row?.fingerprint ?? "";
}

/**
 * New polls start at most this many a second: 12 sources are all polled within a second of
 * being added, 1,000 within 50 s, 100,000 within their interval (docs/decisions/036).
 */
export const FIRST_POLLS_PER_SECOND = 20;

/**
 * Gives the jobs the frontier adds (keys not live in the queue) first due times spread evenly
 * over min(interval, n / FIRST_POLLS_PER_SECOND), in an order hashed from the key so one host's
 * feeds do not come due together: 100,000 sources added at once (a first start, an OPML import)
 * come due like a steady state, not as one herd at second 0. Jobs already live keep theirs
 * (enqueue leaves them be).
 */
export function spreadFirstPolls(
  jobs: JobInput[],
  live: ReadonlySet<string>,
  intervals: ReadonlyMap<string, number>,
): JobInput[] {
  const fresh = jobs
    .filter((j) => !live.has(j.key as string))
    .map((j) => ({ job: j, order: fnv1a(j.key as string) }))
    .sort((a, b) => a.order - b.order);
  const span = fresh.length / FIRST_POLLS_PER_SECOND;
  const delays = new Map<JobInput, number>();
  fresh.forEach(({ job }, rank) => {
    const interval = intervals.get(job.sourceId as string) ?? span;
    delays.set(job, (rank / fresh.length) * Math.min(interval, span));
  });
  return jobs.map((j) => (delays.has(j) ? { ...j, delaySeconds: delays.get(j) } : j));
}

/** The queue's live keyed jobs (ready or leased), by key. */
async function liveJobs(
  db: Database,
  queue: string,
): Promise<Map<string, { state: string; requeues: number }>> {
  const rows = await db.prisma.$queryRaw<{ key: string; state: string; requeues: number }[]>`
    SELECT key, state, requeues FROM jobs
    WHERE queue = ${queue} AND key IS NOT NULL AND state IN ('ready', 'leased')`;
  return new Map(rows.map((r) => [r.key, { state: r.state, requeues: r.requeues }]));
}

/** 32-bit FNV-1a: a stable, well-mixed order for keys, not a security hash. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The source a collector job is about, if it is still to be collected by that collector. */
export async function wantedSource(db: Database, payload: CollectorPayload) {
  const row = await db.prisma.source.findUnique({
    where: { id: payload.sourceId },
    include: { state: true },
  });
  if (!row?.enabled || row.state?.disabledReason || !row.collectors.includes(payload.collector)) {
    return null;
  }
  return toSourceRef(row);
}
