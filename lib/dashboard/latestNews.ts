import type { Database } from "@/lib/db";

export const LATEST_LIMIT = 50;

export interface LatestNewsRow {
  entryKey: string;
  title: string | null;
  /** Only http(s) links; anything else a feed sends is dropped rather than put in an href. */
  link: string | null;
  sourceId: string;
  sourceName: string;
  version: number;
  state: "live" | "retracted";
  quality: "authoritative" | "fallback";
  /** news_events rows for this entry: every delivery, duplicates and rejects included. */
  auditCount: number;
  updatedAt: Date;
}

/** The newest-updated current rows and their audit counts, in a fixed number of queries. */
export async function latestNews(db: Database, limit = LATEST_LIMIT): Promise<LatestNewsRow[]> {
  const { prisma } = db;
  const rows = await prisma.news.findMany({
    orderBy: { updatedAt: "desc" },
    take: limit,
    select: {
      entryKey: true,
      title: true,
      link: true,
      sourceId: true,
      version: true,
      quality: true,
      deletedAt: true,
      updatedAt: true,
      source: { select: { name: true } },
    },
  });
  if (rows.length === 0) return [];

  const counts = await prisma.newsEvent.groupBy({
    by: ["entryKey"],
    where: { entryKey: { in: rows.map((r) => r.entryKey) } },
    _count: { _all: true },
  });
  const auditCount = new Map(counts.map((c) => [c.entryKey, c._count._all]));

  return rows.map((r) => ({
    entryKey: r.entryKey,
    title: r.title,
    link: httpLink(r.link),
    sourceId: r.sourceId,
    sourceName: r.source.name,
    version: r.version,
    state: r.deletedAt ? "retracted" : "live",
    quality: r.quality === "fallback" ? "fallback" : "authoritative",
    auditCount: auditCount.get(r.entryKey) ?? 0,
    updatedAt: r.updatedAt,
  }));
}

function httpLink(link: string | null): string | null {
  if (!link) return null;
  try {
    const { protocol } = new URL(link);
    return protocol === "http:" || protocol === "https:" ? link : null;
  } catch {
    return null;
  }
}
