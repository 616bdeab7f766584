import { apiError } from "@/lib/api/respond";
import { DedupConflictError, DedupInvalidError, DedupNotFoundError } from "@/workers/admin/dedup";
import { DedupRunBusyError } from "@/workers/admin/dedupRerun";
import { DedupItemMissingError } from "@/workers/dedup/clusters";

/**
 * The Dedup routes' answers for the admin functions' errors: 400 bad_request (the field named),
 * 404 not_found, 409 with the conflict's code (review_superseded, review_decided, link_ended,
 * stale_revision, not_a_finished_dry_run, run_running). Anything else is rethrown.
 */
export function dedupError(err: unknown): Response {
  if (err instanceof DedupInvalidError) return apiError(400, "bad_request", err.message);
  if (err instanceof DedupNotFoundError || err instanceof DedupItemMissingError) {
    return apiError(404, "not_found", err.message);
  }
  if (err instanceof DedupConflictError) return apiError(409, err.code, err.message);
  if (err instanceof DedupRunBusyError) return apiError(409, "run_running", err.message);
  throw err;
}
