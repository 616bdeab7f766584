import { ItemsView } from "./ItemsView";
import { SearchPanel } from "./SearchPanel";

export const metadata = { title: "Items · wirewatch" };

type Params = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (typeof v === "string" ? v : "");

export default async function ItemsPage({ searchParams }: { searchParams: Promise<Params> }) {
  const params = await searchParams;
  return (
    <main>
      <h1>Items</h1>
      <p className="lede">
        Search the stories by their words and by meaning, or browse the current rows, newest update
        first; open one to see every observation of it and what the writer did.
      </p>
      <SearchPanel
        initial={{ q: one(params.search), lang: one(params.lang), source: one(params.source) }}
      />
      <h2>Current rows</h2>
      <ItemsView />
    </main>
  );
}
