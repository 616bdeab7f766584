import { LATEST_LIMIT, latestNews } from "./latestNews";
import { NewsTable } from "./NewsTable";
import { SourcesTable } from "./SourcesTable";
import { sourcesHealth } from "./sourceHealth";

// Rendered per request: the rows change with every observation, and the build has no database.
export const dynamic = "force-dynamic";

export default async function HomePage() {
  const [rows, sources] = await Promise.all([latestNews(), sourcesHealth()]);
  return (
    <main>
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
