import { QueuesPage } from "./QueuesPage";

export default function Page() {
  return (
    <main>
      <QueuesPage />
    </main>
  );
}
