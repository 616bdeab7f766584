import { SourcePage } from "./SourcePage";

export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <main>
      <SourcePage id={decodeURIComponent(id)} />
    </main>
  );
}
