import { ReadPathPage } from "./ReadPathPage";

export default function Page() {
  return (
    <main>
      <ReadPathPage />
    </main>
  );
}
