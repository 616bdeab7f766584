import { describe, expect, it } from "vitest";
import type { ReadStory } from "@/lib/generated/prisma/client";
import { decodeCursor } from "@/lib/readmodel/keys";
import {
  etagOf,
  orderPayload,
  orderSlice,
  PayloadFormatError,
  pageFromOrder,
  pagePayload,
  parseOrder,
  parseStory,
  publicStory,
  storyPayload,
} from "@/lib/readmodel/payload";
import type { ListPage, PublicStory } from "@/lib/readmodel/types";

const at = new Date("2026-12-19T10:00:00.000Z");

function row(n: number, extra: Partial<ReadStory> = {}): ReadStory {
  const key = n.toString(16).padStart(64, "0");
  return {
    storyKey: key,
    sourceId: "dhaka-daily",
    itemVersion: 1,
    title: `Story ${n}`,
    link: `https://example.test/${n}`,
    summary: null,
    category: "world",
    language: "en",
    breaking: false,
    outlets: [
      {
        sourceId: "dhaka-daily",
        source: "Dhaka Daily",
        link: `https://example.test/${n}`,
        firstSeenAt: at.toISOString(),
      },
      { sourceId: "wire", source: "The Wire", link: null, firstSeenAt: at.toISOString() },
    ],
    outletCount: 2,
    publishedAt: null,
    firstSeenAt: at,
    fetchedAt: at,
    updatedAt: at,
    indexedAt: at,
    ...extra,
  } as ReadStory;
}

describe("publicStory", () => {
  it("shows the row with its outlets, canonical first, and ISO times", () => {
    const story = publicStory(row(1, { publishedAt: new Date("2026-12-19T09:00:00Z") }));
    expect(story.source).toEqual({ id: "dhaka-daily", name: "Dhaka Daily" });
    expect(story.outlets.map((o) => o.source.name)).toEqual(["Dhaka Daily", "The Wire"]);
    expect(story.publishedAt).toBe("2026-12-19T09:00:00.000Z");
    expect(story.firstSeenAt).toBe(at.toISOString());
  });

  it("tolerates outlets that are not what the index stage writes", () => {
    const story = publicStory(row(2, { outlets: [null, 3, { source: "x" }] as never }));
    expect(story.outlets).toEqual([]);
    expect(story.source).toEqual({ id: "dhaka-daily", name: "dhaka-daily" });
  });
});

describe("payloads", () => {
  const stories = [1, 2, 3, 4, 5].map((n) => publicStory(row(n)));

  it("tag the bytes strongly: the same bytes, the same ETag; other bytes or version, another", () => {
    const a = storyPayload(stories[0] as PublicStory, 3, at);
    const b = storyPayload(stories[0] as PublicStory, 3, at);
    expect(a.etag).toMatch(/^"3-[A-Za-z0-9_-]{16}"$/);
    expect(b.etag).toBe(a.etag);
    expect(b.body.equals(a.body)).toBe(true);
    expect(storyPayload(stories[1] as PublicStory, 3, at).etag).not.toBe(a.etag);
    expect(storyPayload(stories[0] as PublicStory, 4, at).etag).not.toBe(a.etag);
    expect(etagOf(3, a.body)).toBe(a.etag);
    expect(parseStory(a)).toEqual(stories[0]);
    expect(a.key).toBe(`story:${stories[0]?.id}`);
  });

  it("a page carries a cursor to the next page, none on the last", () => {
    const ids = stories.map((s) => s.id);
    const first = pagePayload("home", 2, 0, stories.slice(0, 2), ids.length, 9, at);
    const body = JSON.parse(first.body.toString()) as ListPage;
    expect(body.items).toHaveLength(2);
    expect(body.model).toEqual({ version: 9, builtAt: at.toISOString() });
    expect(decodeCursor(body.nextCursor as string)).toEqual({ v: 9, o: 2, l: "home" });
    const last = pagePayload("home", 2, 4, stories.slice(4), ids.length, 9, at);
    expect((JSON.parse(last.body.toString()) as ListPage).nextCursor).toBeNull();
    expect(first.key).toBe("page:2:0:home");
  });

  it("pageFromOrder makes the builder's bytes from the order and story payloads", () => {
    const ids = stories.map((s) => s.id);
    const order = parseOrder(orderPayload("lang:en", ids, 9, at));
    expect(order.ids).toEqual(ids);
    const built = pagePayload("lang:en", 2, 2, stories.slice(2, 4), ids.length, 9, at);
    const byId = new Map(stories.map((s) => [s.id, storyPayload(s, 8, at)]));
    const fromOrder = pageFromOrder(order, byId, 2, 2);
    expect(fromOrder.body.equals(built.body)).toBe(true);
    expect(fromOrder.etag).toBe(built.etag);
    expect(fromOrder.key).toBe(built.key);
    expect(orderSlice(order, 2, 2)).toEqual(ids.slice(2, 4));
  });

  it("a story gone since the version was built is left out; the cursor keeps its place", () => {
    const ids = stories.map((s) => s.id);
    const order = parseOrder(orderPayload("home", ids, 9, at));
    const byId = new Map<string, PublicStory>(stories.map((s) => [s.id, s]));
    byId.delete(ids[1] as string);
    const page = JSON.parse(pageFromOrder(order, byId, 0, 2).body.toString()) as ListPage;
    expect(page.items.map((s) => s.id)).toEqual([ids[0]]);
    expect(decodeCursor(page.nextCursor as string).o).toBe(2);
  });

  it("refuses bytes that are not its own", () => {
    const junk = { ...storyPayload(stories[0] as PublicStory, 1, at), body: Buffer.from("{") };
    expect(() => parseStory(junk)).toThrow(PayloadFormatError);
    expect(() => parseOrder({ ...junk, body: Buffer.from('{"ids":[1]}') })).toThrow(/not an order/);
  });
});
