import type { Metadata } from "next";
import { Suspense } from "react";
import { LoginForm } from "./LoginForm";

export const metadata: Metadata = { title: "Log in · wirewatch" };

/** The admin login (ADMIN_PASSWORD). Read-only pages may not need it (DASHBOARD_READ). */
export default function LoginPage() {
  return (
    <main>
      <h1>Admin login</h1>
      <Suspense>
        <LoginForm />
      </Suspense>
    </main>
  );
}
