import { apiError } from "../api/respond";
import { config } from "../config";
import { type Database, getDb } from "../db";
import { isLoopbackRequest, isSameOrigin } from "./client";
import {
  type AdminState,
  loadAdminState,
  openSession,
  readCookie,
  SESSION_COOKIE,
} from "./session";

/**
 * The admin guard every route handler uses (docs/decisions/009).
 *
 *   const auth = await requireAdmin(request);
 *   if (auth instanceof Response) return auth;   // nothing was changed
 *   … auth.actor is "admin" (a logged-in session) or "loopback" (no password, embedded default)
 *
 *   const denied = await requireReader(request);
 *   if (denied) return denied;
 */

/** What the guard needs to decide; from lib/config.ts and getDb() unless a test passes its own. */
export interface AuthContext {
  db: Database;
  adminPassword: string | undefined;
  dashboardRead: "open" | "admin";
  /** Milliseconds since the epoch; Date.now() when absent. */
  now?: number;
}

export type AdminMode = "password" | "loopback" | "disabled";

export interface AdminStatus {
  /** A valid admin session cookie came with the request. */
  loggedIn: boolean;
  /** When that session ends (ISO time), else null. */
  expiresAt: string | null;
  /** password: ADMIN_PASSWORD is set; loopback: none, embedded default; disabled: none, PostgreSQL. */
  mode: AdminMode;
  /** Whether this request could perform admin actions now. */
  adminActions: boolean;
  /** Why admin actions are not available (or how they are), for the header; null when logged in. */
  reason: string | null;
  /** Whether this request may read the dashboard. */
  canRead: boolean;
}

const MUTATION_EXEMPT = new Set(["GET", "HEAD", "OPTIONS"]);

export const NO_PASSWORD_LOOPBACK =
  "admin actions from this machine only (no ADMIN_PASSWORD set on the embedded database)";
export const NO_PASSWORD_POSTGRES =
  "admin actions are disabled: set ADMIN_PASSWORD (required when wirewatch runs on PostgreSQL)";

async function defaultContext(): Promise<AuthContext> {
  const settings = config();
  return {
    db: await getDb(),
    adminPassword: settings.ADMIN_PASSWORD,
    dashboardRead: settings.DASHBOARD_READ,
  };
}

/** The caller's context, or the configured one; a 503 Response when the database is unreachable. */
export async function resolveContext(
  context: AuthContext | undefined,
): Promise<AuthContext | Response> {
  if (context) return context;
  try {
    return await defaultContext();
  } catch (err) {
    return apiError(503, "database_unavailable", (err as Error).message);
  }
}

function isJson(request: Request): boolean {
  const type = request.headers.get("content-type");
  return type?.split(";")[0]?.trim().toLowerCase() === "application/json";
}

/**
 * The CSRF half of the guard, for every mutation (login and logout included): refuses with 403
 * when the request is not same-origin (Origin or Sec-Fetch-Site) and with 415 when its body is
 * not declared application/json (a form post from another site cannot declare that). Null when
 * the request passes, or is not a mutation (GET, HEAD, OPTIONS).
 */
export function checkMutationRequest(request: Request): Response | null {
  if (MUTATION_EXEMPT.has(request.method.toUpperCase())) return null;
  if (!isSameOrigin(request)) {
    return apiError(
      403,
      "cross_origin",
      "admin actions must come from the dashboard itself (Origin or Sec-Fetch-Site same-origin)",
    );
  }
  if (!isJson(request)) {
    return apiError(
      415,
      "unsupported_media_type",
      "admin actions take Content-Type: application/json",
    );
  }
  return null;
}

interface Evaluation {
  mode: AdminMode;
  session: { expiresAt: Date } | null;
  loopback: boolean;
}

async function evaluate(request: Request, context: AuthContext): Promise<Evaluation> {
  const loopback = isLoopbackRequest(request);
  if (!context.adminPassword) {
    return {
      mode: context.db.kind === "pglite" ? "loopback" : "disabled",
      session: null,
      loopback,
    };
  }
  const state: AdminState = await loadAdminState(context.db, context.adminPassword);
  const session = await openSession(
    state,
    readCookie(request, SESSION_COOKIE),
    context.now ?? Date.now(),
  );
  return { mode: "password", session, loopback };
}

/**
 * For every admin (mutation) route. Refuses, as a JSON error Response and before anything is
 * changed: 403 cross_origin, 415 unsupported_media_type (see checkMutationRequest); 401
 * unauthorized without a valid session when ADMIN_PASSWORD is set; without one, 403
 * admin_local_only for a request not from this machine on the embedded default and 403
 * admin_disabled on PostgreSQL. Allowed: `{ actor: "admin" }` or `{ actor: "loopback" }`.
 */
export async function requireAdmin(
  request: Request,
  context?: AuthContext,
): Promise<{ actor: string } | Response> {
  const refused = checkMutationRequest(request);
  if (refused) return refused;
  const ctx = await resolveContext(context);
  if (ctx instanceof Response) return ctx;
  const { mode, session, loopback } = await evaluate(request, ctx);
  switch (mode) {
    case "password":
      return session
        ? { actor: "admin" }
        : apiError(401, "unauthorized", "log in as admin to do this (/login)");
    case "loopback":
      return loopback
        ? { actor: "loopback" }
        : apiError(403, "admin_local_only", NO_PASSWORD_LOOPBACK);
    case "disabled":
      return apiError(403, "admin_disabled", NO_PASSWORD_POSTGRES);
  }
}

function mayRead(context: AuthContext, { mode, session, loopback }: Evaluation): boolean {
  if (context.dashboardRead === "open") return true;
  if (mode === "password") return session !== null;
  return mode === "loopback" && loopback;
}

/**
 * For every read API: null when the request may read (DASHBOARD_READ=open, a valid session, or,
 * with no password on the embedded default, a request from this machine), else 401.
 */
export async function requireReader(
  request: Request,
  context?: AuthContext,
): Promise<Response | null> {
  const ctx = await resolveContext(context);
  if (ctx instanceof Response) return ctx;
  if (ctx.dashboardRead === "open") return null;
  if (mayRead(ctx, await evaluate(request, ctx))) return null;
  return apiError(401, "unauthorized", "the dashboard needs an admin login (DASHBOARD_READ=admin)");
}

/** Whether the request is logged in and whether admin actions are available, and why not. */
export async function adminStatus(request: Request, context?: AuthContext): Promise<AdminStatus> {
  const ctx = await resolveContext(context);
  if (ctx instanceof Response) throw new Error("the database is unavailable");
  const evaluation = await evaluate(request, ctx);
  const { mode, session, loopback } = evaluation;
  const canRead = mayRead(ctx, evaluation);
  const base = {
    loggedIn: session !== null,
    expiresAt: session?.expiresAt.toISOString() ?? null,
    mode,
    canRead,
  };
  switch (mode) {
    case "password":
      return {
        ...base,
        adminActions: session !== null,
        reason: session ? null : "log in to use admin actions",
      };
    case "loopback":
      return {
        ...base,
        adminActions: loopback,
        reason: NO_PASSWORD_LOOPBACK,
      };
    case "disabled":
      return { ...base, adminActions: false, reason: NO_PASSWORD_POSTGRES };
  }
}
