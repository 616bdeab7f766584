import { ItemsView } from "./ItemsView";

export const metadata = { title: "Items · wirewatch" };

export default function ItemsPage() {
  return (
    <main>
      <h1>Items</h1>
      <p className="lede">
        Current rows, newest update first. Search by headline text or source; open one to see every
        observation of it and what the writer did.
      </p>
      <ItemsView />
    </main>
  );
}
