import { z } from "zod";
import { apiError, json } from "../api/respond";
import { clientAddress, isHttps } from "./client";
import { type AuthContext, adminStatus, checkMutationRequest, resolveContext } from "./guard";
import { passwordMatches } from "./password";
import { type LoginRateLimiter, loginLimiter } from "./rateLimit";
import {
  loadAdminState,
  openSession,
  readCookie,
  revokeAllSessions,
  SESSION_COOKIE,
  sealSession,
  sessionCookie,
} from "./session";

const LoginBody = z.object({ password: z.string().min(1).max(1024) });

/**
 * POST /api/auth/login `{ password }`: same-origin JSON only; 409 no_password when ADMIN_PASSWORD
 * is not set; 429 with Retry-After after too many wrong passwords; 401 for a wrong one; else a
 * new session cookie and the status.
 */
export async function login(
  request: Request,
  context?: AuthContext,
  limiter: LoginRateLimiter = loginLimiter(),
): Promise<Response> {
  const refused = checkMutationRequest(request);
  if (refused) return refused;
  const ctx = await resolveContext(context);
  if (ctx instanceof Response) return ctx;
  if (!ctx.adminPassword) {
    return apiError(
      409,
      "no_password",
      ctx.db.kind === "pglite"
        ? "no ADMIN_PASSWORD is set: admin actions work from this machine without a login"
        : "no ADMIN_PASSWORD is set: admin actions are disabled on PostgreSQL until one is",
    );
  }
  const client = clientAddress(request);
  const now = ctx.now ?? Date.now();
  const wait = limiter.retryAfter(client, now);
  if (wait !== null) {
    return apiError(429, "too_many_attempts", `too many wrong passwords; try again in ${wait} s`, {
      "retry-after": String(wait),
    });
  }
  if (Number(request.headers.get("content-length") ?? 0) > 4096) {
    return apiError(413, "too_large", "a login body is { password } and nothing more");
  }
  const body = LoginBody.safeParse(await request.json().catch(() => null));
  if (!body.success) return apiError(400, "bad_request", "expected { password: string }");
  if (!passwordMatches(body.data.password, ctx.adminPassword)) {
    limiter.fail(client, now);
    return apiError(401, "wrong_password", "wrong password");
  }
  limiter.succeed(client);
  const state = await loadAdminState(ctx.db, ctx.adminPassword);
  const sealed = await sealSession(state, now);
  // The status as the next request will see it: the same headers, with the new cookie.
  const withCookie = new Request(request.url, {
    headers: { ...Object.fromEntries(request.headers), cookie: `${SESSION_COOKIE}=${sealed}` },
  });
  return json(await adminStatus(withCookie, ctx), {
    headers: { "set-cookie": sessionCookie(sealed, isHttps(request)) },
  });
}

/**
 * POST /api/auth/logout: same-origin JSON only. A valid session's logout ends every session (the
 * version goes up); the cookie is cleared either way.
 */
export async function logout(request: Request, context?: AuthContext): Promise<Response> {
  const refused = checkMutationRequest(request);
  if (refused) return refused;
  const ctx = await resolveContext(context);
  if (ctx instanceof Response) return ctx;
  let revoked = false;
  if (ctx.adminPassword) {
    const state = await loadAdminState(ctx.db, ctx.adminPassword);
    if (await openSession(state, readCookie(request, SESSION_COOKIE), ctx.now ?? Date.now())) {
      await revokeAllSessions(ctx.db);
      revoked = true;
    }
  }
  return json(
    { loggedOut: true, revoked },
    {
      headers: { "set-cookie": sessionCookie(null, isHttps(request)) },
    },
  );
}

/** GET /api/auth/session: the status the header and the login page show. */
export async function session(request: Request, context?: AuthContext): Promise<Response> {
  const ctx = await resolveContext(context);
  if (ctx instanceof Response) return ctx;
  return json(await adminStatus(request, ctx));
}
