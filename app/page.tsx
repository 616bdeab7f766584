import { getDb } from "@/lib/db";
import { LATEST_LIMIT, latestNews } from "./latestNews";
import { NewsTable } from "./NewsTable";
import { SourcesTable } from "./SourcesTable";
import { sourcesHealth } from "./sourceHealth";

// Rendered per request: the rows change with every observation, and the build has no database.
export const dynamic = "force-dynamic";

export default async function HomePage() {
  const [rows, sources, outage] = await Promise.all([
    latestNews(),
    sourcesHealth(),
    getDb().then((db) =>
      db.prisma.networkOutage.findFirst({ where: { endedAt: null }, orderBy: { id: "desc" } }),
    ),
  ]);
  return (
    <main>
      {outage ? (
        <p className="banner outage" role="alert">
          Local network outage since {outage.startedAt.toISOString()}: {outage.failingHosts} of{" "}
          {outage.totalHosts} hosts failing at once. Our network, not the sources: breakers are
          frozen and no source is disabled until it ends.
        </p>
      ) : null}
      <h1>Latest headlines</h1>
      <p className="lede">The {LATEST_LIMIT} most recently updated items, newest first.</p>
      <NewsTable rows={rows} />
      <h2>Sources</h2>
      <p className="lede">
        Connection activity and news arrival, apart: quiet is a slow news spell, stalled a dead
        connection.
      </p>
      <SourcesTable rows={sources} />
    </main>
  );
}
