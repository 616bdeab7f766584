import { DeadLettersView } from "./DeadLettersView";

export const metadata = { title: "Dead letters · wirewatch" };

export default function DeadLettersPage() {
  return (
    <main>
      <h1>Dead letters</h1>
      <p className="lede">
        Jobs that will not run again on their own, grouped by cause. Requeue or discard one, a
        selection or a whole group; every action is counted first and audited.
      </p>
      <DeadLettersView />
    </main>
  );
}
