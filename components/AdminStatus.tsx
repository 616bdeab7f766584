"use client";

import Link from "next/link";
import styles from "./AdminStatus.module.css";
import { useAdminSession, useLogout } from "./hooks/useAdminSession";

/** The header's admin corner: logged in and log out, a login link, or why there is no login. */
export function AdminStatus() {
  const session = useAdminSession();
  const logout = useLogout();
  const s = session.data;
  let content: React.ReactNode = null;
  if (s?.mode === "password" && s.loggedIn) {
    content = (
      <>
        <span>Admin: logged in</span>
        <button
          type="button"
          className={styles.button}
          onClick={() => logout.mutate()}
          disabled={logout.isPending}
        >
          Log out
        </button>
      </>
    );
  } else if (s?.mode === "password") {
    content = <Link href="/login">Log in</Link>;
  } else if (s?.mode === "loopback") {
    content = <span title={s.reason ?? undefined}>Admin actions from this machine only</span>;
  } else if (s?.mode === "disabled") {
    content = <span title={s.reason ?? undefined}>Admin actions disabled (no password)</span>;
  }
  return (
    <div className={styles.status} data-testid="admin-status" data-mode={s?.mode ?? "unknown"}>
      {content}
    </div>
  );
}
