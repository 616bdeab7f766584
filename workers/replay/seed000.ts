import type { Database } from "@/lib/db";
import { edit, observe, retract, type WriteOutcome } from "@/workers/store";
import { listenForNews } from "@/workers/store/notifications";

/**
 * Seed 000's synthetic headline: one item, eight deliveries, through the real writer.
 * Collector A's fallback observer sees it first; the primary stream's full observation arrives
 * 28 ms later; collector B delivers the same payload; a backfill after A reconnects; an edited
 * title; a late fallback observation of the old title; a retraction; the same retraction again.
 */
export const SEED_000_SOURCE = {
  id: "helmsman-wire",
  name: "Helmsman wire (synthetic)",
  kind: "stream",
};

export interface ReplayStep {
  step: number;
  result: WriteOutcome["result"];
  version: number | null;
  auditRows: number;
  notified: boolean;
  deleted: boolean;
}

export async function replaySeed000(
  db: Database,
  start = new Date("2026-06-12T09:30:00Z"),
): Promise<ReplayStep[]> {
  const at = (ms: number) => new Date(start.getTime() + ms);
  const id = { sourceId: SEED_000_SOURCE.id, guid: "helmsman-synthetic-0001" };
  const thin = {
    ...id,
    origin: "fallback",
    title: "Central bank holds rates",
    link: "https://news.example/cb-holds",
  };
  const rich = {
    ...id,
    origin: "primary",
    title: "Central bank holds rates",
    link: "https://news.example/cb-holds",
    summary: "The central bank left its policy rate unchanged.",
    category: "economy",
    breaking: true,
    instruments: ["EURUSD", "DE10Y"],
    language: "en",
    publishedAt: at(-1_000),
    revision: 1,
  };
  const edited = { ...rich, title: "Central bank holds rates, signals cut in autumn", revision: 2 };
  const retraction = { ...id, origin: "primary", revision: 3 };

  const deliveries: (() => Promise<WriteOutcome>)[] = [
    () => observe(db, { ...thin, collector: "A", observedAt: at(0) }),
    () => observe(db, { ...rich, collector: "A", observedAt: at(28) }),
    () => observe(db, { ...rich, collector: "B", observedAt: at(31) }),
    () => observe(db, { ...rich, collector: "A", origin: "backfill", observedAt: at(5_000) }),
    () => edit(db, { ...edited, collector: "A", observedAt: at(60_000) }),
    () => observe(db, { ...thin, collector: "A", observedAt: at(61_000) }),
    () => retract(db, { ...retraction, collector: "A", observedAt: at(120_000) }),
    () => retract(db, { ...retraction, collector: "B", observedAt: at(120_040) }),
  ];

  await db.prisma.source.upsert({
    where: { id: SEED_000_SOURCE.id },
    create: SEED_000_SOURCE,
    update: {},
  });
  const heard = await listenForNews(db);
  const steps: ReplayStep[] = [];
  try {
    for (const [i, deliver] of deliveries.entries()) {
      const outcome = await deliver();
      const notified = (await heard.settle()).length > 0;
      const row = await db.prisma.news.findUnique({ where: { entryKey: outcome.entryKey } });
      steps.push({
        step: i + 1,
        result: outcome.result,
        version: row?.version ?? null,
        auditRows: await db.prisma.newsEvent.count(),
        notified,
        deleted: row?.deletedAt != null,
      });
    }
  } finally {
    await heard.stop();
  }
  return steps;
}
