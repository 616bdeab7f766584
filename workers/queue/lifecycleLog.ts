import type { Logger } from "pino";
import { on } from "@/lib/events";

/**
 * The queue's log lines, from its lifecycle events: what an operator reads when a job dies, a
 * lease is given up, expired leases come back or a stopping worker hands its jobs back. Claims
 * and completions are not logged (tens of thousands a second); metrics count them. Only the
 * events of worker `workerId` (several workers may share a process); returns the unsubscribe.
 */
export function logQueueLifecycle(workerId: string, log: Logger): () => void {
  const offs = [
    on("job:dead", (e) => {
      if (e.workerId !== workerId) return;
      log.warn(
        { job: e.jobId, queue: e.queue, attempt: e.attempt, error: e.error },
        "job parked as a dead letter",
      );
    }),
    on("job:lost", (e) => {
      if (e.workerId !== workerId) return;
      log.warn(
        { job: e.jobId, queue: e.queue, reason: e.reason },
        "lease given up; handler aborted",
      );
    }),
    on("job:expired", (e) => {
      if (e.workerId !== workerId) return;
      log.info(
        { queue: e.queue, returned: e.count - e.parked, parked: e.parked },
        "expired leases swept",
      );
    }),
    on("job:released", (e) => {
      if (e.workerId !== workerId) return;
      log.info({ queue: e.queue, released: e.count }, "leases released");
    }),
  ];
  return () => {
    for (const off of offs) off();
  };
}
