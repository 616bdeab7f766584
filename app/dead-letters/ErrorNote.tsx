import Link from "next/link";
import { ApiError } from "@/components/hooks/api";
import s from "./deadLetters.module.css";

/** An answer's error; a 401 offers the login page, since every action here needs an admin. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error as Error;
  return (
    <p className={s.error} role="alert">
      {e instanceof ApiError && e.status === 401 ? (
        <>
          {e.message}. <Link href="/login">Log in</Link>
        </>
      ) : (
        e.message
      )}
    </p>
  );
}
