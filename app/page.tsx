import { LATEST_LIMIT, latestNews } from "./latestNews";
import { NewsTable } from "./NewsTable";

// Rendered per request: the rows change with every observation, and the build has no database.
export const dynamic = "force-dynamic";

export default async function HomePage() {
  const rows = await latestNews();
  return (
    <main>
      <h1>Latest headlines</h1>
      <p className="lede">The {LATEST_LIMIT} most recently updated items, newest first.</p>
      <NewsTable rows={rows} />
    </main>
  );
}
