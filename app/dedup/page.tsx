import { DedupView } from "./DedupView";

export const metadata = { title: "Dedup · wirewatch" };

export default function DedupPage() {
  return (
    <main>
      <h1>Dedup</h1>
      <p className="lede">
        The cascade links each item to the story it repeats, cheapest test first: the same URL, the
        same text, a near match, then meaning. Nothing is deleted: every link says what made it and
        can be undone.
      </p>
      <DedupView />
    </main>
  );
}
