import { describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { OutageWatch } from "./outage";

/** Just enough of a database to see what the watch writes. */
function stubDb() {
  const writes: string[] = [];
  const db = {
    prisma: {
      $queryRaw: async (sql: TemplateStringsArray) => {
        writes.push(sql.join("?").trim().split(/\s+/).slice(0, 3).join(" "));
        return [{ id: 7n }];
      },
      $executeRaw: async (sql: TemplateStringsArray) => {
        writes.push(sql.join("?").trim().split(/\s+/).slice(0, 2).join(" "));
        return 1;
      },
    },
  } as unknown as Database;
  return { db, writes };
}

describe("OutageWatch", () => {
  it("declares an outage when ≥ 80 % of ≥ 3 distinct hosts fail at the network level", async () => {
    const { db, writes } = stubDb();
    const watch = new OutageWatch({ now: () => 1_000 });
    await watch.observe(db, "a.test", "dns");
    await watch.observe(db, "b.test", "connect");
    expect(watch.active()).toBe(false); // two hosts are not "most of the world"
    await watch.observe(db, "c.test", "reset");
    expect(watch.current()).toMatchObject({ id: 7n, failingHosts: 3, totalHosts: 3 });
    expect(writes).toEqual(["INSERT INTO network_outages"]);
  });

  it("one failing host among healthy ones is that host's problem", async () => {
    const { db } = stubDb();
    const watch = new OutageWatch();
    for (const h of ["a", "b", "c", "d"]) await watch.observe(db, `${h}.test`, "ok");
    await watch.observe(db, "e.test", "dns");
    await watch.observe(db, "e.test", "dns");
    expect(watch.active()).toBe(false);
  });

  it("4 of 5 is enough, 3 of 5 is not", async () => {
    const { db } = stubDb();
    const watch = new OutageWatch();
    await watch.observe(db, "a.test", "http_5xx"); // an HTTP answer: our network works
    await watch.observe(db, "b.test", "not_modified");
    for (const h of ["c", "d", "e"]) await watch.observe(db, `${h}.test`, "dns");
    expect(watch.active()).toBe(false);
    await watch.observe(db, "b.test", "dns");
    expect(watch.active()).toBe(true);
  });

  it("forgets observations older than the window", async () => {
    const { db } = stubDb();
    let now = 0;
    const watch = new OutageWatch({ windowMs: 60_000, now: () => now });
    await watch.observe(db, "a.test", "dns");
    await watch.observe(db, "b.test", "dns");
    now = 120_000;
    await watch.observe(db, "c.test", "dns");
    expect(watch.active()).toBe(false);
  });

  it("any answer from a host ends it; timeouts and policy refusals say nothing", async () => {
    const { db, writes } = stubDb();
    const watch = new OutageWatch();
    for (const h of ["a", "b", "c"]) await watch.observe(db, `${h}.test`, "dns");
    await watch.observe(db, "d.test", "timeout");
    await watch.observe(db, "e.test", "blocked_ssrf");
    expect(watch.active()).toBe(true);
    await watch.observe(db, "a.test", "ok");
    expect(watch.current()).toBeNull();
    expect(writes.at(-1)).toBe("UPDATE network_outages");
  });

  it("concurrent failures declare one outage", async () => {
    const { db, writes } = stubDb();
    const watch = new OutageWatch();
    await Promise.all(
      ["a", "b", "c", "d", "e", "f"].map((h) => watch.observe(db, `${h}.test`, "dns")),
    );
    expect(writes).toEqual(["INSERT INTO network_outages"]);
  });
});
