import { readBodyBytes } from "@/lib/api/body";
import { json } from "@/lib/api/respond";
import { getDb } from "@/lib/db";
import { emit } from "@/lib/events";
import { textProblem } from "@/lib/validation";
import {
  receiveWebhook,
  recordWebhookRejection,
  WEBHOOK_MAX_BYTES,
} from "@/workers/stories/receiveWebhook";
import { storySourceIds } from "@/workers/stories/source";

export const dynamic = "force-dynamic";

/**
 * POST /api/webhooks/stories[?source=<id>]: the story API's signed deliveries (Standard
 * Webhooks). No session: the signature is the credential. The raw body is read (never more than
 * 1 MiB, else 413) before anything parses it, because the signature covers its exact bytes.
 * Answers 200 once the event is recorded (its work runs on the story queue), 401/400/404/413
 * with { outcome, reason, message } when refused, 503 when it could not be recorded; 421 in the
 * error shape when sent to a host this server does not answer to (lib/auth/hosts.ts).
 */
export async function POST(request: Request): Promise<Response> {
  const sources = new URL(request.url).searchParams.getAll("source");
  const sourceId = sources[0] ?? null;
  const read = await readBodyBytes(request, { limit: WEBHOOK_MAX_BYTES });
  if (!read.ok && read.response.status !== 413) return read.response;
  if (!read.ok) {
    const message = `the body is larger than ${WEBHOOK_MAX_BYTES} bytes`;
    // Counted under the source only when it names one that exists: ?source= is the sender's.
    const db = await getDb().catch(() => null);
    const known: string[] = db && sourceId ? await storySourceIds(db).catch(() => []) : [];
    const source = sourceId && known.includes(sourceId) ? sourceId : "";
    emit("story:webhook", { source, outcome: "rejected", reason: "too_large", lagSeconds: null });
    if (db) {
      await recordWebhookRejection(
        db,
        source,
        "too_large",
        request.headers.get("webhook-id"),
        message,
      ).catch(() => {});
    }
    return json({ outcome: "rejected", reason: "too_large", message }, { status: 413 });
  }
  const badSource = sourceParamProblem(sources);
  if (badSource) {
    // A 400, not the 503 the query would have made: no retry can make this name a source.
    emit("story:webhook", {
      source: "",
      outcome: "rejected",
      reason: "unknown_source",
      lagSeconds: null,
    });
    const db = await getDb().catch(() => null);
    if (db) {
      await recordWebhookRejection(
        db,
        "",
        "unknown_source",
        request.headers.get("webhook-id"),
        badSource,
      ).catch(() => {});
    }
    return json(
      { outcome: "rejected", reason: "unknown_source", message: badSource },
      { status: 400 },
    );
  }
  let db: Awaited<ReturnType<typeof getDb>>;
  try {
    db = await getDb();
  } catch {
    return json(
      {
        outcome: "failed",
        reason: "not_recorded",
        message: "the database is unavailable; retry later",
      },
      { status: 503, headers: { "retry-after": "5" } },
    );
  }
  const answer = await receiveWebhook(db, {
    sourceId,
    headers: request.headers,
    body: read.value,
  });
  return json(answer.body, {
    status: answer.status,
    headers: answer.status === 503 ? { "retry-after": "5" } : {},
  });
}

/** Why ?source= cannot name a source (given twice, over 200 characters, not storable text). */
function sourceParamProblem(sources: string[]): string | null {
  if (sources.length > 1) return "source: given more than once";
  const id = sources[0];
  if (!id) return null;
  if (id.length > 200) return "source: a source id is at most 200 characters";
  const problem = textProblem(id);
  return problem ? `source: ${problem}` : null;
}
