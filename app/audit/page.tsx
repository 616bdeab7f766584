import { AuditView } from "./AuditView";

export const metadata = { title: "Audit · wirewatch" };

export default function AuditPage() {
  return (
    <main>
      <h1>Audit</h1>
      <p className="lede">
        Every admin action, dry runs included: who, when, what and how many. Newest first.
      </p>
      <AuditView />
    </main>
  );
}
