// The Dedup page's read routes in-process, over the seeded dedup tables: the answers the page
// draws from, and 400/404 for what they must refuse (never a 500).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { DEDUP_SEED, seedDedupRows } from "@/lib/testing/dedupSeed";

process.env.DASHBOARD_READ = "open";

let db: TestDatabase;
let clusters: string[];
const ORIGIN = "http://localhost:3000";

beforeAll(async () => {
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
  ({ clusters } = await seedDedupRows(db));
});
afterAll(async () => {
  await db?.drop();
});

const get = (path: string) =>
  new Request(`${ORIGIN}${path}`, { headers: { host: "localhost:3000" } });
const params = (id: string) => ({ params: Promise.resolve({ id }) });

describe("GET /api/dedup/overview", () => {
  it("answers the plots, rates and counts, for the window asked", async () => {
    const { GET } = await import("./overview/route");
    const res = await GET(get("/api/dedup/overview?hours=6"));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ hours: 6, bucketSeconds: 300 });
    expect(body.decisions.totals).toEqual(DEDUP_SEED.day);
    expect(body.reviews.pending).toBe(DEDUP_SEED.pendingReviews);
    expect((await (await GET(get("/api/dedup/overview"))).json()).hours).toBe(24);
  });

  it("refuses a window it does not offer, and unknown parameters", async () => {
    const { GET } = await import("./overview/route");
    for (const q of ["hours=5", "hours=abc", "hours=24&hours=6", "hours=1e9", "x=1"]) {
      const res = await GET(get(`/api/dedup/overview?${q}`));
      expect(res.status, q).toBe(400);
      expect((await res.json()).error.code, q).toBe("bad_request");
    }
  });
});

describe("GET /api/dedup/clusters", () => {
  it("pages the largest clusters and refuses a forged cursor", async () => {
    const { GET } = await import("./clusters/route");
    const first = await (await GET(get("/api/dedup/clusters?order=largest&limit=1"))).json();
    expect(first.clusters.map((c: { id: string }) => c.id)).toEqual([clusters[0]]);
    const next = await (
      await GET(get(`/api/dedup/clusters?order=largest&limit=1&cursor=${first.nextCursor}`))
    ).json();
    expect(next.clusters.map((c: { id: string }) => c.id)).toEqual([clusters[1]]);
    for (const q of ["cursor=nope", "order=biggest", "limit=0", "limit=101"]) {
      expect((await GET(get(`/api/dedup/clusters?${q}`))).status, q).toBe(400);
    }
  });
});

describe("GET /api/dedup/clusters/:id", () => {
  it("answers a cluster with its members, 404 for none, 400 for a bad id", async () => {
    const { GET } = await import("./clusters/[id]/route");
    const res = await GET(get(`/api/dedup/clusters/${clusters[0]}`), params(clusters[0] as string));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.members).toHaveLength(3);
    expect(body.members[2].linkedBy.evidence.onlyHere).toEqual(["interest"]);
    expect((await GET(get("/api/dedup/clusters/9999"), params("9999"))).status).toBe(404);
    for (const id of ["0", "-1", "abc", "99999999999999999999", "1.5"]) {
      const bad = await GET(get(`/api/dedup/clusters/${id}`), params(id));
      expect(bad.status, id).toBe(400);
    }
  });
});

describe("GET /api/dedup/titles", () => {
  it("answers headlines by key and refuses anything but entry keys", async () => {
    const { GET } = await import("./titles/route");
    const key = DEDUP_SEED.keys.near;
    const res = await GET(get(`/api/dedup/titles?keys=${key},${"0".repeat(64)}`));
    expect(res.status).toBe(200);
    expect((await res.json()).titles).toEqual({
      [key]: { title: DEDUP_SEED.titles.near, sourceId: "tribune" },
    });
    const many = Array.from({ length: 201 }, (_, i) => i.toString(16).padStart(64, "0")).join(",");
    for (const q of [
      "",
      "keys=",
      "keys=abc",
      `keys=${key},`,
      `keys=${DEDUP_SEED.keys.reviewD.toUpperCase()}`,
      `keys=${many}`,
    ]) {
      const bad = await GET(get(`/api/dedup/titles?${q}`));
      expect(bad.status, q.slice(0, 40)).toBe(400);
    }
  });
});
