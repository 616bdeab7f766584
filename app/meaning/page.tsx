import { MeaningView } from "./MeaningView";

export const metadata = { title: "Meaning · wirewatch" };

export default function MeaningPage() {
  return (
    <main>
      <h1>Meaning</h1>
      <p className="lede">
        Every item that survives dedup is embedded by each model in use; every vector records the
        model that made it, so a new model fills in by a backfill while search keeps answering with
        the last complete one. The lexical fallback is shown as lexical: it matches letters, not
        meaning.
      </p>
      <MeaningView />
    </main>
  );
}
