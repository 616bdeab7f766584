import { randomBytes } from "node:crypto";
import { sealData, unsealData } from "iron-session";
import type { Database } from "../db";
import { passwordFingerprint } from "./password";

/** The session cookie's name. */
export const SESSION_COOKIE = "wirewatch_admin";

/** Absolute session lifetime: a session ends 12 hours after login, however busy it was. */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;

/** What the sealed cookie carries: the session version it was issued under and when. */
interface SessionData {
  v: number;
  iat: number;
}

export interface AdminState {
  sessionVersion: number;
  cookieSecret: string;
}

/**
 * The one admin_state row, made at first use with a random cookie secret. When the configured
 * password is not the one the stored fingerprint was taken from (changed, set or removed), the
 * session version goes up first, which ends every session opened under the old password; the
 * conditional update makes that happen once however many processes notice at the same time.
 */
export async function loadAdminState(
  db: Database,
  password: string | undefined,
): Promise<AdminState> {
  let row = await db.prisma.adminState.findUnique({ where: { id: 1 } });
  if (!row) {
    const secret = randomBytes(32).toString("base64url");
    await db.prisma.$executeRaw`
      INSERT INTO "admin_state" ("id", "cookie_secret") VALUES (1, ${secret})
      ON CONFLICT ("id") DO NOTHING`;
    row = await db.prisma.adminState.findUniqueOrThrow({ where: { id: 1 } });
  }
  const fingerprint = password ? await passwordFingerprint(password, row.cookieSecret) : null;
  if (row.passwordFingerprint !== fingerprint) {
    await db.prisma.$executeRaw`
      UPDATE "admin_state"
      SET "session_version" = "session_version" + 1, "password_fingerprint" = ${fingerprint},
          "updated_at" = now()
      WHERE "id" = 1 AND "password_fingerprint" IS DISTINCT FROM ${fingerprint}`;
    row = await db.prisma.adminState.findUniqueOrThrow({ where: { id: 1 } });
  }
  return { sessionVersion: row.sessionVersion, cookieSecret: row.cookieSecret };
}

/** Ends every session: the next check of any cookie sees a newer version. */
export async function revokeAllSessions(db: Database): Promise<void> {
  await db.prisma.$executeRaw`
    UPDATE "admin_state" SET "session_version" = "session_version" + 1, "updated_at" = now()
    WHERE "id" = 1`;
}

/** A sealed session value for the current session version. */
export async function sealSession(state: AdminState, now = Date.now()): Promise<string> {
  const data: SessionData = { v: state.sessionVersion, iat: now };
  return sealData(data, { password: state.cookieSecret, ttl: SESSION_TTL_SECONDS });
}

/**
 * The valid session a cookie value carries, with when it ends; null when the value is not a seal
 * of ours, is past its lifetime or was issued under an older session version.
 */
export async function openSession(
  state: AdminState,
  sealed: string | undefined,
  now = Date.now(),
): Promise<{ expiresAt: Date } | null> {
  if (!sealed) return null;
  let data: Partial<SessionData>;
  try {
    data = await unsealData<Partial<SessionData>>(sealed, {
      password: state.cookieSecret,
      ttl: SESSION_TTL_SECONDS,
    });
  } catch {
    return null;
  }
  if (typeof data.v !== "number" || typeof data.iat !== "number") return null;
  if (data.v !== state.sessionVersion) return null;
  const expiresAt = data.iat + SESSION_TTL_SECONDS * 1000;
  if (data.iat > now + 60_000 || expiresAt <= now) return null;
  return { expiresAt: new Date(expiresAt) };
}

/**
 * A cookie's value from a request's Cookie header. A value that does not percent-decode
 * ("%E0%A4%A") is left out, as Next.js's own cookie parser does: it cannot be a seal of ours,
 * so the request reads as having no session (not logged in, a fresh login replaces it) rather
 * than failing, which would lock that browser out of logging in and out until it clears it.
 */
export function readCookie(request: Request, name: string): string | undefined {
  const header = request.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {}
  }
  return undefined;
}

/** The Set-Cookie value for a new session (or, with value null, one that removes it). */
export function sessionCookie(value: string | null, secure: boolean): string {
  const attributes = [
    `${SESSION_COOKIE}=${value === null ? "" : encodeURIComponent(value)}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${value === null ? 0 : SESSION_TTL_SECONDS}`,
  ];
  if (secure) attributes.push("Secure");
  return attributes.join("; ");
}
