import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { housekeeping } from "../housekeeping";
import { archiveExpiredDeadLetters, DEAD_LETTER_TTL_DAYS } from "./archiveExpired";
import { deadLetterStats, listDeadLetters, requeueDeadLetters } from "./index";
import { makeDeadLetters } from "./testing";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRaw`TRUNCATE jobs, job_failures, lease_events, admin_audit`;
});

async function deadFor(id: string, days: number) {
  await db.prisma.$executeRaw`
    UPDATE jobs SET dead_at = now() - make_interval(days => ${days}::int) - interval '1 minute'
    WHERE id = ${id}::bigint`;
}

describe("archiveExpiredDeadLetters", () => {
  it("archives dead letters past their TTL, keeping rows and history, and leaves the rest", async () => {
    const [old, fresh] = await makeDeadLetters(db, "fetch", [{}, {}]);
    await deadFor(old as string, DEAD_LETTER_TTL_DAYS);
    await deadFor(fresh as string, DEAD_LETTER_TTL_DAYS - 1);
    expect(await archiveExpiredDeadLetters(db)).toBe(1);
    expect(await archiveExpiredDeadLetters(db)).toBe(0); // idempotent
    const row = await db.prisma.job.findUniqueOrThrow({ where: { id: BigInt(old as string) } });
    expect(row.state).toBe("archived");
    expect(row.archivedAt).toBeInstanceOf(Date);
    expect(row.lastError).not.toBeNull();
    expect(await db.prisma.jobFailure.count({ where: { jobId: row.id } })).toBe(1);
    expect((await listDeadLetters(db)).items.map((d) => d.id)).toEqual([fresh]);
    expect((await deadLetterStats(db)).depth).toBe(1);
    // Out of reach of requeue once archived.
    expect(
      await requeueDeadLetters(db, { actor: "t", filter: { ids: [old as string] } }),
    ).toMatchObject({ matched: 0, requeued: 0 });
  });

  it("takes a custom TTL, and housekeeping runs it", async () => {
    const [a, b] = await makeDeadLetters(db, "fetch", [{}, {}]);
    await deadFor(a as string, 3);
    await deadFor(b as string, 1);
    expect(await archiveExpiredDeadLetters(db, 5)).toBe(0);
    expect((await housekeeping(db, 2)).archived).toBe(1);
    expect((await deadLetterStats(db)).depth).toBe(1);
  });
});
