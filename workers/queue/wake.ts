import { Prisma } from "@/lib/generated/prisma/client";
import { JOBS_CHANNEL } from "./wakeQueues";

/**
 * Wakes the workers of the queues a CTE of the statement made jobs due in (makeDueSql,
 * enqueueSql: rows with a `queue` column): one NOTIFY per queue, sent at commit, so a worker
 * never wakes before the change is visible. Use as a scalar: `(${wakeSql("due")}) AS woke`.
 */
export function wakeSql(cte: "due" | "job"): Prisma.Sql {
  return Prisma.sql`SELECT count(*)::int FROM (
      SELECT pg_notify(${JOBS_CHANNEL}, q.queue) FROM (SELECT DISTINCT queue FROM ${Prisma.raw(cte)}) q
    ) n`;
}
