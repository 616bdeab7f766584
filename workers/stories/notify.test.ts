import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestDatabase,
  requireRealPostgres,
  type TestDatabase,
  testServerUrl,
} from "@/lib/testing/db";
import { notifyOnce, type Sender } from "./notify";

const story = { id: "st_9", ticker: "ACME", title: "Acme turns strong", version: 2 };

describe("one-time notifications (claimed before sent)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.prisma.source.create({ data: { id: "desk", name: "Desk", kind: "story-api" } });
  });
  afterAll(() => db?.drop());

  it("sends once however often it is asked, and records that it went out", async () => {
    const sent: string[] = [];
    const send: Sender = async (_db, n) => void sent.push(n.story.id);
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => notifyOnce(db, { sourceId: "desk", story }, send)),
    );
    expect(outcomes.filter((o) => o === "sent")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "already_claimed")).toHaveLength(4);
    expect(sent).toEqual(["st_9"]);
    const claim = await db.prisma.claimed.findUniqueOrThrow({ where: { key: "strong:desk/st_9" } });
    expect(claim.sentAt).not.toBeNull();
  });

  it("the default send is a NOTIFY that fits however long the title", async () => {
    const long = { ...story, id: "st_long", title: "ক".repeat(3_000) }; // 9,000 bytes of Bangla
    expect(await notifyOnce(db, { sourceId: "desk", story: long })).toBe("sent");
  });

  it("a send that fails is not retried: at most once", async () => {
    const failing: Sender = async () => {
      throw new Error("mail server down");
    };
    const other = { ...story, id: "st_10" };
    expect(await notifyOnce(db, { sourceId: "desk", story: other }, failing)).toBe("failed");
    let sent = 0;
    expect(await notifyOnce(db, { sourceId: "desk", story: other }, async () => void sent++)).toBe(
      "already_claimed",
    );
    expect(sent).toBe(0);
    const claim = await db.prisma.claimed.findUniqueOrThrow({
      where: { key: "strong:desk/st_10" },
    });
    expect(claim.sentAt).toBeNull(); // the dashboard counts it as lost
  });
});

describe.skipIf(!requireRealPostgres("killing a process between claim and send"))(
  "kill -9 between claim and send",
  () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
      await db.prisma.source.create({ data: { id: "desk", name: "Desk", kind: "story-api" } });
    });
    afterAll(() => db?.drop());

    it("loses that notification rather than sending it twice", async () => {
      const server = testServerUrl() as string;
      const [row] = await db.prisma.$queryRaw<{ db: string }[]>`SELECT current_database() AS db`;
      const url = new URL(server);
      url.pathname = `/${row?.db}`;
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "workers/stories/testing/claimAndHang.ts", url.href, "desk", "st_k"],
        { cwd: path.resolve(import.meta.dirname, "../.."), stdio: ["ignore", "pipe", "inherit"] },
      );
      const exited = new Promise((resolve) => child.once("exit", resolve));
      for await (const line of createInterface({ input: child.stdout })) {
        if (line === "claimed") break;
      }
      child.kill("SIGKILL");
      await exited;
      // Another worker runs the same event again: the claim is there, nothing is sent.
      let sent = 0;
      const again = await notifyOnce(
        db,
        { sourceId: "desk", story: { ...story, id: "st_k" } },
        async () => {
          sent++;
        },
      );
      expect(again).toBe("already_claimed");
      expect(sent).toBe(0);
      const claim = await db.prisma.claimed.findUniqueOrThrow({
        where: { key: "strong:desk/st_k" },
      });
      expect(claim.sentAt).toBeNull();
    }, 30_000);
  },
);
