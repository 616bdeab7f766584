import { Prisma } from "@/lib/generated/prisma/client";

/**
 * Makes waiting jobs due now ("fetch now", a ticker added to a story source), as a CTE of the
 * caller's statement, so the change commits with what caused it (its audit row, the ticker).
 * `where` narrows the jobs (over jobs' columns); only ready jobs are touched. Returns id, queue:
 * pass the CTE's name to wakeSql to notify the workers of those queues.
 *
 * Safe beside claims: a job being claimed is row-locked by the claim's FOR UPDATE; this UPDATE
 * waits for it (one claim statement, milliseconds) and then re-checks state = 'ready' on the
 * new row version (READ COMMITTED), so a job claimed meanwhile is left alone. A claim that comes
 * after sees the earlier run_at and takes the job at once, which is the point. Touching run_at
 * only never changes attempts or the lease, so nothing a worker holds is affected.
 */
export function makeDueSql(where: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    UPDATE jobs SET run_at = now()
    WHERE state = 'ready' AND (${where})
    RETURNING id, queue`;
}
