import { RepairsView } from "./RepairsView";

export const metadata = { title: "Repairs · wirewatch" };

export default function RepairsPage() {
  return (
    <main>
      <h1>Repairs</h1>
      <p className="lede">
        Rebuild current rows from their observations in news_events through the writer's own merge
        rule. A dry run lists every row that differs, field by field; applying rewrites them
        (version + 1, no notifications). One run at a time.
      </p>
      <RepairsView />
    </main>
  );
}
