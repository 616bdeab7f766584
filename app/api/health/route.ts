import { checkHealth } from "./checkHealth";

export const dynamic = "force-dynamic";

const noStore = { "Cache-Control": "no-store" };

/**
 * Readiness probe: 200 once the database answers and ingestion runs (when it runs in this
 * process), else 503 with the reason as { error: { code, message } }.
 */
export async function GET(): Promise<Response> {
  const report = await checkHealth();
  return Response.json(report.body, { status: report.ok ? 200 : 503, headers: noStore });
}
