import type { Database } from "@/lib/db";

/** Depth in a bucket: the largest sample of each state; null where no worker sampled the queue. */
export interface DepthPoint {
  /** Start of the bucket, epoch ms. */
  t: number;
  due: number | null;
  running: number | null;
  retrying: number | null;
  dead: number | null;
}

export interface QueueDepthSeries {
  queue: string;
  points: DepthPoint[];
  /** The largest sample of each state over the window (0 when none was sampled). */
  peak: { due: number; running: number; retrying: number; dead: number };
}

/** No series has more points than this (a bucket may be cut by the window's ends: one more). */
export const DEPTH_MAX_POINTS = 200;

/** Bucket lengths in minutes, each a divisor of the next period a reader thinks in. */
const BUCKET_MINUTES = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;

/**
 * The shortest bucket that keeps a window of `seconds` within DEPTH_MAX_POINTS per series: an
 * hour in minutes (60 points), 6 hours in 2 minutes (180), a day in 10 minutes (144), a week in
 * hours (168). A sample is a minute, so no bucket is shorter.
 */
export function depthBucketSeconds(seconds: number): number {
  const minutes = seconds / 60;
  const fits = BUCKET_MINUTES.find((m) => minutes / m <= DEPTH_MAX_POINTS);
  return (fits ?? Math.ceil(minutes / DEPTH_MAX_POINTS)) * 60;
}

/**
 * Per queue, depth over [from, to] in buckets of `bucketSeconds` (aligned to the epoch), every
 * bucket present, oldest first. A bucket's figure per state is the largest sample in it, so an
 * hour's bucket still shows the ten minutes a backlog stood at its peak (an average would halve
 * it, the last sample could miss it). Reads a range of queue_depth_samples_minute_idx: at most
 * 1,440 rows a day per queue, grouped in SQL, so the answer is queues × points whatever the window.
 */
export async function queueDepthSeries(
  db: Database,
  { from, to, bucketSeconds }: { from: Date; to: Date; bucketSeconds: number },
): Promise<QueueDepthSeries[]> {
  const rows = await db.prisma.$queryRaw<
    { queue: string; t: Date; due: number; running: number; retrying: number; dead: number }[]
  >`
    SELECT queue,
           to_timestamp(floor(extract(epoch FROM minute) / ${bucketSeconds}::int) * ${bucketSeconds}::int) AS t,
           max(due) AS due, max(running) AS running, max(retrying) AS retrying, max(dead) AS dead
    FROM queue_depth_samples
    WHERE minute >= ${from} AND minute <= ${to}
    GROUP BY 1, 2
    ORDER BY 1, 2`;
  const size = bucketSeconds * 1000;
  const first = Math.floor(from.getTime() / size) * size;
  const last = Math.floor(to.getTime() / size) * size;
  const byQueue = new Map<string, Map<number, (typeof rows)[number]>>();
  for (const r of rows) {
    const buckets = byQueue.get(r.queue) ?? new Map();
    buckets.set(new Date(r.t).getTime(), r);
    byQueue.set(r.queue, buckets);
  }
  return [...byQueue].map(([queue, buckets]) => {
    const peak = { due: 0, running: 0, retrying: 0, dead: 0 };
    const points: DepthPoint[] = [];
    for (let t = first; t <= last; t += size) {
      const r = buckets.get(t);
      if (!r) {
        points.push({ t, due: null, running: null, retrying: null, dead: null });
        continue;
      }
      const p = { t, due: r.due, running: r.running, retrying: r.retrying, dead: r.dead };
      for (const k of ["due", "running", "retrying", "dead"] as const) {
        peak[k] = Math.max(peak[k], p[k]);
      }
      points.push(p);
    }
    return { queue, points, peak };
  });
}
