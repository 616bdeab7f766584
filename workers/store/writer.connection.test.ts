import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { observe } from "./index";

const enabled = requireRealPostgres("the writer across dropped server connections");

describe.skipIf(!enabled)("the writer when the database drops its connections", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.prisma.source.create({ data: { id: "wire", name: "Wire", kind: "stream" } });
  });
  afterAll(() => db?.drop());

  it("fails loudly while the connection is gone, then writes exactly once on retry", async () => {
    const writer = await db.connectAnother(2);
    const input = { sourceId: "wire", collector: "A", origin: "primary", guid: "x", title: "T" };
    expect((await observe(writer, input)).result).toBe("inserted");

    // Kill every server connection of the writer's pool, as a restart or failover would.
    await db.prisma.$queryRaw`
      SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`;

    // A delivery either fails with an error (nothing recorded, so the caller retries) or, once
    // the pool has replaced the dead connection, succeeds; it is never silently lost.
    const attempts: string[] = [];
    let outcome: Awaited<ReturnType<typeof observe>> | undefined;
    for (let i = 0; i < 5 && !outcome; i++) {
      try {
        outcome = await observe(writer, { ...input, guid: "y" });
      } catch (err) {
        attempts.push((err as Error).message);
      }
    }
    expect(outcome?.result).toBe("inserted");
    expect(attempts.length).toBeLessThan(5);
    expect(
      await db.prisma.newsEvent.count({ where: { payload: { path: ["guid"], equals: "y" } } }),
    ).toBe(1);
  });
});
