import type { Database } from "@/lib/db";
import { NEWS_CHANNEL } from "./writeObservation";

export interface NewsListener {
  /**
   * Resolves with the payloads heard since the last call, once every notification committed
   * before this call has arrived.
   */
  settle(): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * Listens on the news channel through a real LISTEN. settle() sends a sentinel NOTIFY and waits
 * for it: Postgres delivers a session's notifications in commit order, so when the sentinel
 * arrives, everything committed before it has arrived too. No sleeping, no guessing.
 */
export async function listenForNews(db: Database): Promise<NewsListener> {
  let heard: string[] = [];
  const waiting = new Map<string, () => void>();
  let n = 0;
  const stop = await db.listen(NEWS_CHANNEL, (payload) => {
    const done = waiting.get(payload);
    if (done) done();
    else if (!payload.startsWith("sentinel:")) heard.push(payload);
  });
  return {
    stop,
    async settle() {
      const token = `sentinel:${process.pid}:${++n}`;
      const arrived = new Promise<void>((resolve) => waiting.set(token, resolve));
      await db.prisma.$queryRaw`
        SELECT count(*)::int AS n FROM (SELECT pg_notify(${NEWS_CHANNEL}, ${token})) AS s`;
      await arrived;
      waiting.delete(token);
      const out = heard;
      heard = [];
      return out;
    },
  };
}
