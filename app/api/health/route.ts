import { checkDatabase } from "./checkDatabase";

export const dynamic = "force-dynamic";

const noStore = { "Cache-Control": "no-store" };

/** Readiness probe: 200 once the database answers, 503 with the reason until then. */
export async function GET(): Promise<Response> {
  const check = await checkDatabase();
  if (!check.ok) {
    return Response.json(
      { error: { code: check.code, message: check.message } },
      { status: 503, headers: noStore },
    );
  }
  return Response.json(
    { status: "ok", database: { kind: check.kind, location: check.location } },
    { headers: noStore },
  );
}
