import type { Database } from "@/lib/db";
import { syncTickers } from "@/workers/stories/source";
import type { SourceConfig } from "./sourcesFile";

/**
 * Makes the database agree with the sources file: each configured source is created or updated
 * (marked config_origin 'file'), and a file source no longer in the file is disabled, not
 * deleted: its items and history stay. Sources added in the dashboard are left alone, even one
 * whose id the file names too: the file's entry is skipped (and returned), never written over the
 * dashboard's row. What fetching learned (source_state) is kept across edits.
 */
export async function syncSources(
  db: Database,
  configured: SourceConfig[],
): Promise<{ skipped: string[] }> {
  const taken = await db.prisma.source.findMany({
    where: { id: { in: configured.map((s) => s.id) }, configOrigin: { not: "file" } },
    select: { id: true },
  });
  const skipped = new Set(taken.map((s) => s.id));
  const sources = configured.filter((s) => !skipped.has(s.id));
  await db.prisma.$transaction(async (tx) => {
    // Two passes: a page may observe a source defined after it in the file.
    for (const s of sources) {
      const data = {
        name: s.name,
        kind: s.kind,
        url: s.url,
        backfillUrl: s.backfillUrl ?? null,
        observes: null as string | null,
        allowPrivate: s.allowPrivate,
        enabled: s.enabled,
        render: s.kind === "page" ? (s.render ?? "http") : "http",
        // The file is the truth for its sources: no folder there is the top, not "keep the old".
        folder: s.folder ?? null,
        pollIntervalSeconds: s.pollIntervalSeconds,
        collectors: s.collectors,
        tickers: s.tickers ?? [],
        storyMode: s.kind === "story-api" ? (s.storyMode ?? "snapshot") : null,
        webhookSecrets: s.webhookSecrets ?? [],
        configOrigin: "file",
        updatedAt: new Date(),
      };
      await tx.source.upsert({ where: { id: s.id }, create: { id: s.id, ...data }, update: data });
      await tx.sourceState.upsert({
        where: { sourceId: s.id },
        create: { sourceId: s.id },
        update: {},
      });
    }
    for (const s of sources) {
      if (s.observes)
        await tx.source.update({ where: { id: s.id }, data: { observes: s.observes } });
    }
    await tx.source.updateMany({
      where: { configOrigin: "file", id: { notIn: configured.map((s) => s.id) } },
      data: { enabled: false, updatedAt: new Date() },
    });
  });
  // A story-api source follows its tickers from now: events published before are history.
  for (const s of sources) {
    if (s.kind === "story-api") await syncTickers(db, s.id, s.tickers ?? []);
  }
  return { skipped: [...skipped] };
}
