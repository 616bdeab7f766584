import { readBodyBytes } from "@/lib/api/body";
import { apiError, json } from "@/lib/api/respond";
import { getDb } from "@/lib/db";
import { PUSH_MAX_BYTES, receivePush } from "@/workers/websub/receivePush";
import { verifyIntent } from "@/workers/websub/verifyIntent";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ token: string }> };

/** A token is 43 base64url characters (workers/websub/subscriptions.ts, newToken). */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * GET /api/websub/:token: a hub's intent verification (WebSub §5.3). The challenge comes back
 * as text/plain only for a subscription waiting for that mode on that topic; anything else is a
 * 404. No session: the unguessable token is what routes the request, and the echo confirms
 * nothing we did not ask for.
 */
export async function GET(request: Request, { params }: Params): Promise<Response> {
  const { token } = await params;
  const answer = TOKEN.test(token)
    ? await verifyIntent(await getDb(), token, new URL(request.url).searchParams)
    : null;
  if (answer?.status !== 200) {
    return apiError(404, "not_found", "no subscription is waiting for this verification");
  }
  return new Response(answer.body, {
    status: 200,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });
}

/**
 * A push's answer: its outcome, and on a refusal the API's error shape too ({error: {code,
 * message}}), which every non-2xx answer of this app carries.
 */
function pushAnswer(
  status: number,
  body: { outcome: string; reason?: string; message: string },
  headers: Record<string, string> = {},
): Response {
  const error =
    status >= 400 ? { error: { code: body.reason ?? body.outcome, message: body.message } } : {};
  return json({ ...body, ...error }, { status, headers });
}

/**
 * POST /api/websub/:token: a hub's push (WebSub §7). The raw body is read first (at most 10 MiB,
 * else 413), because X-Hub-Signature covers its exact bytes; a missing or bad signature is 403
 * and counted, never written; a signed feed goes through the parser and the writer as a poll's
 * would (workers/websub/receivePush.ts). 503 when the database is away, so the hub retries.
 */
export async function POST(request: Request, { params }: Params): Promise<Response> {
  const { token } = await params;
  const read = await readBodyBytes(request, { limit: PUSH_MAX_BYTES });
  if (!read.ok) return read.response;
  if (!TOKEN.test(token)) {
    return pushAnswer(404, {
      outcome: "rejected",
      reason: "unknown_callback",
      message: "no subscription at this callback",
    });
  }
  let db: Awaited<ReturnType<typeof getDb>>;
  try {
    db = await getDb();
  } catch {
    return pushAnswer(
      503,
      {
        outcome: "failed",
        reason: "not_written",
        message: "the database is unavailable; retry later",
      },
      { "retry-after": "5" },
    );
  }
  const answer = await receivePush(db, token, { headers: request.headers, body: read.value });
  return pushAnswer(
    answer.status,
    answer.body,
    answer.status === 503 ? { "retry-after": "5" } : {},
  );
}
