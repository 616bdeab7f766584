import { readBodyBytes } from "@/lib/api/body";
import { apiError, json } from "@/lib/api/respond";
import { getDb } from "@/lib/db";
import {
  PUSH_MAX_BYTES,
  receivePush,
  refuseOversizedPush,
  unknownCallback,
} from "@/workers/websub/receivePush";
import { unknownVerification, verifyIntent } from "@/workers/websub/verifyIntent";

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
  const query = new URL(request.url).searchParams;
  const answer = TOKEN.test(token)
    ? await verifyIntent(await getDb(), token, query)
    : unknownVerification(query);
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
 * else 413, counted on its subscription), because X-Hub-Signature covers its exact bytes; a
 * missing or bad signature is 403 and counted, never written; a signed feed goes through the
 * parser and the writer as a poll's would (workers/websub/receivePush.ts, which also counts every
 * push for the metrics). 503 when the database is away, so the hub retries.
 */
export async function POST(request: Request, { params }: Params): Promise<Response> {
  const receivedAt = performance.now();
  const { token } = await params;
  const read = await readBodyBytes(request, { limit: PUSH_MAX_BYTES });
  if (!read.ok) {
    if (read.response.status === 413 && TOKEN.test(token)) {
      await getDb().then(
        (db) => refuseOversizedPush(db, token),
        () => {},
      );
    }
    return read.response;
  }
  if (!TOKEN.test(token)) {
    const answer = unknownCallback();
    return pushAnswer(answer.status, answer.body);
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
  const answer = await receivePush(db, token, {
    headers: request.headers,
    body: read.value,
    receivedAt,
  });
  return pushAnswer(
    answer.status,
    answer.body,
    answer.status === 503 ? { "retry-after": "5" } : {},
  );
}
