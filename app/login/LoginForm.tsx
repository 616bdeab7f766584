"use client";

import { useRouter, useSearchParams } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ApiError } from "@/components/hooks/api";
import { useAdminSession, useLogin } from "@/components/hooks/useAdminSession";
import { when } from "@/lib/dashboard/format";
import styles from "./login.module.css";
import { safeNext } from "./safeNext";

function errorText(error: unknown): string {
  if (!(error instanceof ApiError)) return "could not reach wirewatch";
  if (error.status === 429) {
    return `Too many wrong passwords. Try again in ${error.retryAfterSeconds ?? "a few"} seconds.`;
  }
  if (error.code === "wrong_password") return "Wrong password.";
  return error.message;
}

export function LoginForm() {
  const router = useRouter();
  const params = useSearchParams();
  const session = useAdminSession();
  const login = useLogin();
  const [password, setPassword] = useState("");
  const s = session.data;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    login.mutate(password, {
      onSuccess: () => {
        setPassword("");
        router.push(safeNext(params.get("next"), window.location.origin));
      },
    });
  };

  if (s && s.mode !== "password") {
    return <p className={styles.note}>{s.reason}</p>;
  }
  if (s?.loggedIn) {
    return (
      <p className={styles.note} role="status">
        Logged in as admin until {when(s.expiresAt)}.
      </p>
    );
  }
  return (
    <form className={styles.form} onSubmit={submit}>
      <label htmlFor="admin-password">Password</label>
      <input
        id="admin-password"
        name="password"
        type="password"
        autoComplete="current-password"
        required
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      <button type="submit" disabled={login.isPending || password === ""}>
        {login.isPending ? "Logging in…" : "Log in"}
      </button>
      {login.isError && (
        <p className={styles.error} role="alert">
          {errorText(login.error)}
        </p>
      )}
    </form>
  );
}
