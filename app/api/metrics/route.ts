import { apiError } from "@/lib/api/respond";
import { getDb } from "@/lib/db";
import { metricsAuthorized, scrape } from "@/lib/metrics";

// Prometheus scrapes: never prerendered, never cached.
export const dynamic = "force-dynamic";

/**
 * GET /api/metrics: this process's counters (it runs the workers inline on the embedded default)
 * plus the database-derived gauges, which only the web app exports (lib/metrics/registry.ts).
 */
export async function GET(request: Request): Promise<Response> {
  if (!metricsAuthorized(request.headers.get("authorization"))) {
    return apiError(401, "unauthorized", "metrics need Authorization: Bearer <METRICS_TOKEN>", {
      "www-authenticate": 'Bearer realm="wirewatch metrics"',
    });
  }
  const { contentType, body } = await scrape({ database: getDb });
  return new Response(body, {
    headers: { "content-type": contentType, "cache-control": "no-store" },
  });
}
