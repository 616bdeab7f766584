import { ClusterView } from "./ClusterView";

export const metadata = { title: "Cluster · Dedup · wirewatch" };

export default async function ClusterPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <main>
      <ClusterView id={id} />
    </main>
  );
}
