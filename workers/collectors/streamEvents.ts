import { z } from "zod";
import type { Delivery } from "@/workers/store";
import type { SourceRef } from "./sourceRef";

// What a primary stream sends and what the writer is handed for it.

/** A primary-stream event: a new or edited item (with the source's revision), or a retraction. */
const itemEvent = z.object({
  type: z.literal("item"),
  seq: z.number().int().optional(),
  guid: z.string().min(1),
  link: z.string().optional(),
  revision: z.number().int().min(0).optional(),
  title: z.string(),
  summary: z.string().nullish(),
  category: z.string().nullish(),
  breaking: z.boolean().optional(),
  instruments: z.array(z.string()).optional(),
  language: z.string().nullish(),
  publishedAt: z.string().nullish(),
});
const retractionEvent = z.object({
  type: z.literal("retraction"),
  seq: z.number().int().optional(),
  guid: z.string().min(1),
  link: z.string().optional(),
  revision: z.number().int().min(0).optional(),
});
export const streamEvent = z.discriminatedUnion("type", [itemEvent, retractionEvent]);
export type ReceivedEvent = z.infer<typeof streamEvent>;

const historyPage = z.object({
  events: z.array(z.unknown()),
  lastSeq: z.number().int().optional(),
  truncated: z.boolean().optional(),
});

/** The history endpoint's page, or why it is not one (the source's fault: `parse_error`). */
export function readHistory(body: Buffer): z.infer<typeof historyPage> | { unreadable: string } {
  try {
    return historyPage.parse(JSON.parse(body.toString("utf8")));
  } catch (err) {
    return { unreadable: `backfill: not a history page: ${(err as Error).message.slice(0, 200)}` };
  }
}

/** One SSE message's data as an event; anything else (a comment, a stranger's JSON) is null. */
export function parseEvent(data: string): ReceivedEvent | null {
  try {
    const parsed = streamEvent.safeParse(JSON.parse(data));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** An event as a delivery: origin `primary` or `backfill`; a revision above 1 is an edit. */
export function delivery(
  source: SourceRef,
  collector: string,
  event: ReceivedEvent,
  origin: "primary" | "backfill",
): Delivery {
  const base = {
    sourceId: source.id,
    collector,
    origin,
    guid: event.guid,
    link: event.link,
    revision: event.revision,
  };
  if (event.type === "retraction") return { kind: "retract", input: base };
  const input = {
    ...base,
    title: event.title,
    summary: event.summary ?? undefined,
    category: event.category ?? undefined,
    breaking: event.breaking,
    instruments: event.instruments,
    language: event.language ?? undefined,
    publishedAt: event.publishedAt ?? undefined,
  };
  return { kind: (event.revision ?? 1) > 1 ? "edit" : "observe", input };
}
