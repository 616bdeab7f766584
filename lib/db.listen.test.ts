import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "./testing/db";

// LISTEN has a connection of its own; when PostgreSQL drops it (a restart, a network cut) the
// listener must come back by itself, after lib/backoff's pauses (250 ms doubling to 5 s).
describe.skipIf(!requireRealPostgres("LISTEN reconnecting (PGlite has no connection to lose)"))(
  "listen",
  () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase({ poolSize: 2 });
    });
    afterAll(async () => {
      await db?.drop();
    });

    it("hears notifications again after its connection was terminated", async () => {
      const heard: string[] = [];
      const unlisten = await db.listen("wirewatch_listen_test", (payload) => heard.push(payload));
      try {
        await db.prisma.$executeRaw`SELECT pg_notify('wirewatch_listen_test', 'before')`;
        await until(() => heard.includes("before"));

        const [killed] = await db.prisma.$queryRaw<{ n: number }[]>`
          SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND query = 'LISTEN "wirewatch_listen_test"'`;
        expect(killed?.n).toBe(1);

        // Notifications sent while it is away are lost (listeners must not depend on every
        // one); keep sending until one arrives on the new connection.
        let n = 0;
        await until(async () => {
          await db.prisma.$executeRaw`SELECT pg_notify('wirewatch_listen_test', ${`after-${++n}`})`;
          return heard.some((p) => p.startsWith("after-"));
        });
      } finally {
        await unlisten();
      }
    }, 20_000);
  },
);

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
