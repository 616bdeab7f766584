import { OverviewPage } from "./OverviewPage";

/** Overview: health at a glance, then the latest headlines. Everything polls on the client. */
export default function HomePage() {
  return (
    <main>
      <OverviewPage />
    </main>
  );
}
