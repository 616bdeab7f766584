import { z } from "zod";
import { readJsonBody } from "../api/body";
import { apiError, json } from "../api/respond";
import { clientAddress, isHttps } from "./client";
import { type AuthContext, adminStatus, checkMutationRequest, resolveContext } from "./guard";
import { passwordMatches } from "./password";
import { type LoginRateLimiter, loginLimiter, rateLimitKey } from "./rateLimit";
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

/** `{ "password": … }` of at most 1,024 characters, escaped, fits in 4 KiB with room to spare. */
const LOGIN_BODY_LIMIT = 4096;

/**
 * POST /api/auth/login `{ password }`: same-origin JSON only; 409 no_password when ADMIN_PASSWORD
 * is not set; 429 with Retry-After after too many wrong passwords from the client's address
 * (lib/auth/client.ts); 413 for a body over 4 KiB, 400 for one that is not { password }; 401 for
 * a wrong password; else a new session cookie and the status.
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
  const client = rateLimitKey(clientAddress(request));
  const now = ctx.now ?? Date.now();
  const wait = limiter.retryAfter(client, now);
  if (wait !== null) {
    return apiError(429, "too_many_attempts", `too many wrong passwords; try again in ${wait} s`, {
      "retry-after": String(wait),
    });
  }
  const body = await readJsonBody(request, LoginBody, { limit: LOGIN_BODY_LIMIT });
  if (!body.ok) return body.response;
  if (!passwordMatches(body.value.password, ctx.adminPassword)) {
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
