import { apiError } from "@/lib/api/respond";
import { SourceAdminError } from "@/workers/admin/sources";
import { DiscoverInputError } from "@/workers/sources/discover";

/** A refusal from workers/admin/sources.ts or discover.ts as the route's JSON error; else rethrown. */
export function refusal(err: unknown): Response {
  if (err instanceof SourceAdminError) return apiError(err.status, err.code, err.message);
  if (err instanceof DiscoverInputError) {
    const status = err.problem.code === "blocked_ssrf" ? 422 : 400;
    return apiError(
      status,
      err.problem.code === "blocked_ssrf" ? "blocked_ssrf" : "bad_request",
      `url: ${err.message}`,
    );
  }
  throw err;
}
