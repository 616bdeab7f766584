import { ItemView } from "./ItemView";

export const metadata = { title: "Item · wirewatch" };

export default async function ItemPage({ params }: { params: Promise<{ key: string }> }) {
  const { key } = await params;
  return (
    <main>
      <ItemView entryKey={key} />
    </main>
  );
}
