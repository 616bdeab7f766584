/**
 * The read model's bodies, serialized once and tagged: a story (`story:<id>`), a list's frozen
 * order (`order:<version>:<list>`) and a page of a list (`page:<limit>:<offset>:<list>`).
 *
 * The builder (workers/readmodel) makes them from read_stories rows; the request side
 * (lib/readmodel) makes a page the builder did not prebuild (a deeper page, another limit) from
 * the version's order and the story payloads with `pageFromOrder`, store reads only. Both go
 * through `pagePayload`, so the same page is the same bytes and the same ETag whoever built it.
 */
import { createHash } from "node:crypto";
import type { ReadStory } from "@/lib/generated/prisma/client";
import { encodeCursor, orderKey, pageKey, storyKey } from "@/lib/readmodel/keys";
import type { ListPage, Payload, PublicStory } from "@/lib/readmodel/types";

/** One entry of read_stories.outlets (written by the index stage), canonical first. */
export interface StoryOutlet {
  sourceId: string;
  source: string;
  link: string | null;
  firstSeenAt: string;
}

/** The body of `story:<id>`: GET /api/news/{id}. */
export interface StoryBody {
  story: PublicStory;
  model: { version: number; builtAt: string };
}

/** The body of `order:<version>:<list>`: the version's frozen ranking of the list. */
export interface OrderBody {
  list: string;
  version: number;
  builtAt: string;
  ids: string[];
}

/** A payload whose bytes are not what the builder writes (a store holding something else). */
export class PayloadFormatError extends Error {
  constructor(key: string, reason: string) {
    super(`payload ${key}: ${reason}`);
    this.name = "PayloadFormatError";
  }
}

/**
 * A strong ETag: the model version and 16 base64url characters (96 bits) of the bytes' SHA-256.
 * 96 bits make a collision between two payloads of one key unthinkable (2^48 versions for a
 * 50 % chance); hashing 60 KB takes ~0.1 ms, once per payload at build.
 */
export function etagOf(modelVersion: number, body: Buffer): string {
  const hash = createHash("sha256").update(body).digest("base64url").slice(0, 16);
  return `"${modelVersion}-${hash}"`;
}

function payload(key: string, modelVersion: number, builtAt: Date, value: unknown): Payload {
  const body = Buffer.from(JSON.stringify(value), "utf8");
  return { key, modelVersion, etag: etagOf(modelVersion, body), body, builtAt };
}

function outletsOf(row: Pick<ReadStory, "storyKey" | "sourceId" | "outlets">): StoryOutlet[] {
  if (!Array.isArray(row.outlets)) return [];
  return row.outlets.flatMap((value) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
    const o = value as Record<string, unknown>;
    if (typeof o.sourceId !== "string") return [];
    return [
      {
        sourceId: o.sourceId,
        source: typeof o.source === "string" ? o.source : o.sourceId,
        link: typeof o.link === "string" ? o.link : null,
        firstSeenAt: typeof o.firstSeenAt === "string" ? o.firstSeenAt : "",
      },
    ];
  });
}

/** A read_stories row as the public API shows it. */
export function publicStory(row: ReadStory): PublicStory {
  const outlets = outletsOf(row);
  const own = outlets.find((o) => o.sourceId === row.sourceId);
  return {
    id: row.storyKey,
    title: row.title,
    link: row.link,
    summary: row.summary,
    source: { id: row.sourceId, name: own?.source ?? row.sourceId },
    outlets: outlets.map((o) => ({ source: { id: o.sourceId, name: o.source }, link: o.link })),
    category: row.category,
    language: row.language,
    breaking: row.breaking,
    publishedAt: row.publishedAt?.toISOString() ?? null,
    firstSeenAt: row.firstSeenAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function storyPayload(story: PublicStory, modelVersion: number, builtAt: Date): Payload {
  const body: StoryBody = {
    story,
    model: { version: modelVersion, builtAt: builtAt.toISOString() },
  };
  return payload(storyKey(story.id), modelVersion, builtAt, body);
}

export function orderPayload(
  list: string,
  ids: readonly string[],
  modelVersion: number,
  builtAt: Date,
): Payload {
  const body: OrderBody = {
    list,
    version: modelVersion,
    builtAt: builtAt.toISOString(),
    ids: [...ids],
  };
  return payload(orderKey(list, modelVersion), modelVersion, builtAt, body);
}

/**
 * A page of a list at a version: its stories (already cut to the page), and the cursor to the
 * next page unless this one reaches the end of the order (`total` ids).
 */
export function pagePayload(
  list: string,
  limit: number,
  offset: number,
  items: readonly PublicStory[],
  total: number,
  modelVersion: number,
  builtAt: Date,
): Payload {
  const body: ListPage = {
    items: [...items],
    nextCursor:
      offset + limit < total ? encodeCursor({ v: modelVersion, o: offset + limit, l: list }) : null,
    model: { version: modelVersion, builtAt: builtAt.toISOString() },
  };
  return payload(pageKey(list, limit, offset), modelVersion, builtAt, body);
}

function parse(p: Payload): unknown {
  try {
    return JSON.parse(p.body.toString("utf8"));
  } catch {
    throw new PayloadFormatError(p.key, "not JSON");
  }
}

export function parseOrder(p: Payload): OrderBody {
  const value = parse(p) as Partial<OrderBody> | null;
  if (
    !value ||
    typeof value.list !== "string" ||
    typeof value.version !== "number" ||
    typeof value.builtAt !== "string" ||
    !Array.isArray(value.ids) ||
    !value.ids.every((id) => typeof id === "string")
  ) {
    throw new PayloadFormatError(p.key, "not an order");
  }
  return value as OrderBody;
}

export function parseStory(p: Payload): PublicStory {
  const value = parse(p) as Partial<StoryBody> | null;
  const story = value?.story;
  if (!story || typeof story.id !== "string" || typeof story.title !== "string") {
    throw new PayloadFormatError(p.key, "not a story");
  }
  return story;
}

/** The story ids a page at (offset, limit) of this order shows: the keys to read. */
export function orderSlice(order: OrderBody, offset: number, limit: number): string[] {
  return order.ids.slice(offset, offset + limit);
}

/**
 * A page the builder did not prebuild, from the version's order and the story payloads read for
 * `orderSlice(order, offset, limit)` (a missing one, i.e. retracted since the version was built,
 * is left out; the page keeps its place in the frozen order, so the next cursor neither repeats
 * nor skips a story). The same bytes as the builder's page when every story is there.
 */
export function pageFromOrder(
  order: OrderBody,
  stories: ReadonlyMap<string, Payload | PublicStory>,
  offset: number,
  limit: number,
): Payload {
  const items: PublicStory[] = [];
  for (const id of orderSlice(order, offset, limit)) {
    const found = stories.get(id);
    if (!found) continue;
    items.push(
      "body" in found && Buffer.isBuffer(found.body) ? parseStory(found) : (found as PublicStory),
    );
  }
  return pagePayload(
    order.list,
    limit,
    offset,
    items,
    order.ids.length,
    order.version,
    new Date(order.builtAt),
  );
}
