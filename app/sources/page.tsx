import { SourcesPage } from "./SourcesPage";

export default function Page() {
  return (
    <main>
      <SourcesPage />
    </main>
  );
}
