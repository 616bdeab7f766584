import { StoriesPage } from "./StoriesPage";

export const metadata = { title: "Stories · wirewatch" };

export default function Page() {
  return (
    <main>
      <h1>Stories</h1>
      <p className="lede">
        The copy of the story API kept per story-api source: stories open and closed per ticker, how
        fresh the catch-up is, webhook deliveries and refusals, reloads and one-time notifications.
        Refreshed every 10 seconds.
      </p>
      <StoriesPage />
    </main>
  );
}
