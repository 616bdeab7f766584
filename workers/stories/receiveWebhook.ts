import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { z } from "zod";
import type { RejectReason } from "@/lib/codes";
import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { Prisma } from "@/lib/generated/prisma/client";
import { logger } from "@/lib/logger";
import { enqueueSql } from "@/workers/queue/enqueueSql";
import { wakeSql } from "@/workers/queue/wake";
import { describeIssues, STORY_EVENT_TYPES, type StoryEvent, storyEventSchema } from "./events";
import { STORY_QUEUE } from "./queue";
import { cachedStorySource, type StorySource, storySourceIds } from "./source";

/** Larger bodies are refused with 413 before they are read in full (RELIABILITY: webhooks). */
export const WEBHOOK_MAX_BYTES = 1024 * 1024;

export interface WebhookAnswer {
  status: number;
  body: {
    outcome: "accepted" | "duplicate" | "ignored" | "rejected" | "failed";
    reason?: string;
    message: string;
    eventId?: string;
  };
}

export interface WebhookDelivery {
  /** ?source= on the URL; optional while exactly one story-api source is enabled. */
  sourceId?: string | null;
  headers: Headers;
  /** The raw body, exactly as received: the signature covers these bytes. */
  body: Buffer;
}

/** The job a recorded webhook event becomes. */
export interface StoryEventJob {
  kind: "event";
  sourceId: string;
  event: StoryEvent;
}

const VERIFY_REASONS: Record<string, RejectReason> = {
  "Missing required headers": "missing_headers",
  "Invalid Signature Headers": "bad_timestamp",
  "Message timestamp too old": "stale_timestamp",
  "Message timestamp too new": "future_timestamp",
  "No matching signature found": "bad_signature",
};

const envelope = z.looseObject({ id: z.string(), type: z.string() });

/**
 * POST /api/webhooks/stories, minus HTTP: verify (Standard Webhooks: HMAC-SHA256 over
 * id.timestamp.body, ±300 s, constant-time compare, any of the source's secrets during a
 * rotation), validate, then record the event id and the job that applies it in ONE statement.
 * 200 once recorded (or already recorded: a replay), 401/400/404 with the reason when refused
 * (recorded in story_webhook_rejections), 503 when it could not be recorded: the sender retries,
 * so nothing is lost while the database is away.
 */
export async function receiveWebhook(
  db: Database,
  delivery: WebhookDelivery,
  options: { queue?: string } = {},
): Promise<WebhookAnswer> {
  const webhookId = delivery.headers.get("webhook-id");
  let source: StorySource | null;
  let sourceId = delivery.sourceId ?? "";
  try {
    if (!sourceId) {
      const ids = await storySourceIds(db);
      if (ids.length !== 1) {
        return reject(
          db,
          "",
          "unknown_source",
          webhookId,
          ids.length === 0
            ? "no story-api source is configured"
            : `several story-api sources: name one with ?source= (${ids.slice(0, 5).join(", ")})`,
          404,
        );
      }
      sourceId = ids[0] as string;
    }
    source = await cachedStorySource(db, sourceId);
  } catch (err) {
    return failed("", err); // the source is not known yet: ?source= is the sender's word
  }
  if (!source) {
    return reject(
      db,
      "",
      "unknown_source",
      webhookId,
      `no enabled story-api source "${sourceId}"`,
      404,
    );
  }
  if (source.paused) {
    // Not refused for good: the sender retries, and the catch-up after resume finds the rest.
    emit("story:webhook", {
      source: source.id,
      outcome: "failed",
      reason: "paused",
      lagSeconds: null,
    });
    return {
      status: 503,
      body: {
        outcome: "failed",
        reason: "paused",
        message: `source ${source.id} is ${source.paused}; retry later`,
      },
    };
  }
  if (source.secrets.length === 0) {
    return reject(
      db,
      source.id,
      "no_secret",
      webhookId,
      "the source has no webhook secret configured",
    );
  }

  const verdict = verify(source.secrets, delivery);
  if (verdict) return reject(db, source.id, verdict.reason, webhookId, verdict.message);

  let event: StoryEvent;
  try {
    const raw: unknown = JSON.parse(delivery.body.toString("utf8"));
    const head = envelope.safeParse(raw);
    if (!head.success) {
      return reject(db, source.id, "malformed_event", webhookId, describeIssues(head.error), 400);
    }
    if (!(STORY_EVENT_TYPES as readonly string[]).includes(head.data.type)) {
      // A type this version does not know: acknowledged (a 4xx would be retried in vain), unused.
      return answer(
        source.id,
        200,
        "ignored",
        `event type "${head.data.type}" is not used`,
        head.data.id,
      );
    }
    const parsed = storyEventSchema.safeParse(raw);
    if (!parsed.success) {
      return reject(db, source.id, "malformed_event", webhookId, describeIssues(parsed.error), 400);
    }
    event = parsed.data;
  } catch (err) {
    return reject(
      db,
      source.id,
      "malformed_event",
      webhookId,
      `not JSON: ${(err as Error).message}`,
      400,
    );
  }
  if (event.id !== webhookId) {
    return reject(
      db,
      source.id,
      "malformed_event",
      webhookId,
      `webhook-id ${webhookId} does not match the event id ${event.id}`,
      400,
    );
  }
  if (!source.tickers.has(event.ticker)) {
    // Maybe added since the source was remembered: read it afresh before saying no.
    source =
      (await cachedStorySource(db, source.id, { ticker: event.ticker }).catch(() => null)) ??
      source;
  }
  const followedSince = source.tickers.get(event.ticker);
  if (!followedSince) {
    return answer(source.id, 200, "ignored", `ticker ${event.ticker} is not followed`, event.id);
  }
  if (Date.parse(event.created_at) < followedSince.getTime()) {
    // Published before the ticker was followed: the ticker's one-time load (and the catch-up,
    // which lists such events in order) covers it. Applied alone it could bring back a story
    // whose closing, also from before, was never ours to receive.
    return answer(
      source.id,
      200,
      "ignored",
      `published before ${event.ticker} was followed`,
      event.id,
    );
  }

  let recorded: { fresh: boolean; firstWebhook: boolean } | undefined;
  try {
    recorded = await recordWebhookEvent(db, source.id, event, options.queue ?? STORY_QUEUE);
  } catch (err) {
    return failed(source.id, err);
  }
  const lagSeconds = Math.max(0, (Date.now() - Date.parse(event.created_at)) / 1000);
  if (!recorded?.firstWebhook) {
    emit("story:webhook", {
      source: source.id,
      outcome: "duplicate",
      reason: "replayed_id",
      lagSeconds: null,
    });
    return {
      status: 200,
      body: {
        outcome: "duplicate",
        reason: "replayed_id",
        message: "event already received",
        eventId: event.id,
      },
    };
  }
  emit("story:webhook", { source: source.id, outcome: "accepted", reason: "", lagSeconds });
  return {
    status: 200,
    body: {
      outcome: "accepted",
      message: recorded.fresh
        ? "recorded; applied shortly"
        : "recorded; the catch-up had applied it",
      eventId: event.id,
    },
  };
}

/**
 * One statement: the event id (idempotency key; a replay only counts its delivery) and, for an
 * event not seen before by either way, the job that applies it, with a wake-up for the workers.
 */
async function recordWebhookEvent(
  db: Database,
  sourceId: string,
  event: StoryEvent,
  queue: string,
) {
  const job: StoryEventJob = { kind: "event", sourceId, event };
  const [row] = await db.prisma.$queryRaw<{ fresh: boolean; firstWebhook: boolean }[]>`
    WITH ev AS (
      INSERT INTO story_events AS e (source_id, event_id, type, ticker, published_at, webhook_at, webhook_deliveries)
      VALUES (${sourceId}, ${event.id}, ${event.type}, ${event.ticker}, ${event.created_at}::timestamptz, now(), 1)
      ON CONFLICT (source_id, event_id) DO UPDATE
        SET webhook_deliveries = e.webhook_deliveries + 1,
            webhook_at = coalesce(e.webhook_at, excluded.webhook_at)
      RETURNING (xmax = 0) AS fresh, e.webhook_deliveries = 1 AS first_webhook
    ), job AS (${enqueueSql(
      queue,
      { key: `event:${sourceId}/${event.id}`, payload: job, sourceId, maxAttempts: 8 },
      Prisma.sql`EXISTS (SELECT 1 FROM ev WHERE fresh)`,
    )})
    SELECT ev.fresh, ev.first_webhook AS "firstWebhook", (${wakeSql("job")}) AS woke
    FROM ev`;
  return row;
}

function verify(
  secrets: string[],
  delivery: WebhookDelivery,
): { reason: RejectReason; message: string } | null {
  const headers: Record<string, string> = {};
  for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
    const value = delivery.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  let last: { reason: RejectReason; message: string } = {
    reason: "no_secret",
    message: "no usable webhook secret is configured",
  };
  for (const secret of secrets) {
    let hook: Webhook;
    try {
      hook = new Webhook(secret);
    } catch (err) {
      logger().error({ err }, "a story-api webhook secret is not a whsec_ base64 secret; skipped");
      continue;
    }
    try {
      hook.verify(delivery.body, headers, { jsonParse: false });
      return null;
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      const reason = VERIFY_REASONS[err.message] ?? "bad_signature";
      last = { reason, message: describeReason(reason, headers) };
      // A header or timestamp problem is the same whatever the secret: no point trying the others.
      if (reason !== "bad_signature") return last;
    }
  }
  return last;
}

function describeReason(reason: RejectReason, headers: Record<string, string>): string {
  const ts = Number(headers["webhook-timestamp"]);
  const skew = Number.isFinite(ts) ? Math.round(Date.now() / 1000 - ts) : null;
  switch (reason) {
    case "missing_headers":
      return "webhook-id, webhook-timestamp and webhook-signature are required";
    case "bad_timestamp":
      return "webhook-timestamp is not a number of seconds";
    case "stale_timestamp":
      return `webhook-timestamp is ${skew} s old (tolerance 300 s)`;
    case "future_timestamp":
      return `webhook-timestamp is ${skew === null ? "?" : -skew} s in the future (tolerance 300 s)`;
    default:
      return "no signature matches any of the source's secrets";
  }
}

function answer(
  source: string,
  status: number,
  outcome: "ignored",
  message: string,
  eventId?: string,
): WebhookAnswer {
  emit("story:webhook", { source, outcome, reason: "", lagSeconds: null });
  return { status, body: { outcome, message, eventId } };
}

/** Refuses a delivery, recording why (a refusal stands even when the record cannot be written). */
async function reject(
  db: Database,
  sourceId: string,
  reason: RejectReason,
  webhookId: string | null,
  message: string,
  status = 401,
): Promise<WebhookAnswer> {
  emit("story:webhook", { source: sourceId, outcome: "rejected", reason, lagSeconds: null });
  await recordWebhookRejection(db, sourceId, reason, webhookId, message).catch((err) =>
    logger().warn({ err, reason }, "could not record a refused story webhook"),
  );
  return { status, body: { outcome: "rejected", reason, message } };
}

/**
 * Counts a refused delivery (or a catch-up event passed over as malformed) in
 * story_webhook_rejections, one row per source and reason, keeping the last one's id and detail.
 */
export async function recordWebhookRejection(
  db: Database,
  sourceId: string,
  reason: RejectReason,
  webhookId: string | null,
  detail: string,
): Promise<void> {
  await db.prisma.$executeRaw`
    INSERT INTO story_webhook_rejections (source_id, reason, count, last_webhook_id, last_detail)
    VALUES (${sourceId}, ${reason}, 1, ${webhookId?.slice(0, 200) ?? null}, ${detail.slice(0, 500)})
    ON CONFLICT (source_id, reason) DO UPDATE
      SET count = story_webhook_rejections.count + 1, last_at = now(),
          last_webhook_id = excluded.last_webhook_id, last_detail = excluded.last_detail`;
}

function failed(source: string, err: unknown): WebhookAnswer {
  logger().error(
    { err, source },
    "story webhook not recorded; answering 503 so the sender retries",
  );
  emit("story:webhook", { source, outcome: "failed", reason: "not_recorded", lagSeconds: null });
  return {
    status: 503,
    body: {
      outcome: "failed",
      reason: "not_recorded",
      message: "the event could not be recorded; retry later",
    },
  };
}
