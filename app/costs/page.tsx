import { CostsView } from "./CostsView";

export const metadata = { title: "Costs · wirewatch" };

export default function CostsPage() {
  return (
    <main>
      <h1>Costs</h1>
      <p className="lede">
        What extraction spends and what it buys. Every attempt of the chain is in the cost ledger
        with its provider, model, tokens and price, tied to its item and source; a duplicate is
        never sent to a provider, it takes its cluster&apos;s extraction. All times are UTC.
      </p>
      <CostsView />
    </main>
  );
}
