import type { Database } from "@/lib/db";

/**
 * Deletes every job of a queue, whatever its state. Only for a queue a run made for itself (the
 * story chaos soak's own queue) once its workers have stopped: nothing else reads it, so there
 * is no lease to respect. Returns how many went.
 */
export async function dropQueue(db: Database, queue: string): Promise<number> {
  return db.prisma.$executeRaw`DELETE FROM jobs WHERE queue = ${queue}`;
}
