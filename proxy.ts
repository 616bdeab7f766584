import { type NextRequest, NextResponse } from "next/server";
import { refuseUndecodablePath } from "@/lib/api/respond";
import { newNonce, pageCsp } from "@/lib/auth/csp";
import { refuseForeignHost } from "@/lib/auth/hosts";
import { config as settings } from "@/lib/config";

/**
 * Runs before every page and API request (docs/decisions/009, 013):
 * - refuses a Host this server does not answer to (421), so a page that rebinds its own name to
 *   this machine cannot read the dashboard or its APIs;
 * - refuses a path that does not percent-decode (400; Next.js would answer a bare 500);
 * - gives every page, prefetches included, a Content-Security-Policy with a fresh nonce. The
 *   nonce rides on the request's CSP header, where Next.js finds it and puts it on its scripts;
 *   this is why the root layout renders on each request. API answers get a fixed CSP from
 *   next.config.ts.
 * Not an access check: every route handler checks the session itself (lib/auth/guard.ts).
 */
export function proxy(request: NextRequest): NextResponse {
  const refused = refuseForeignHost(request);
  const bad = refused ?? refuseUndecodablePath(request.nextUrl.pathname);
  if (bad) return new NextResponse(bad.body, { status: bad.status, headers: bad.headers });
  if (request.nextUrl.pathname.startsWith("/api/")) return NextResponse.next();
  const csp = pageCsp(newNonce(), { development: settings().NODE_ENV === "development" });
  const headers = new Headers(request.headers);
  headers.set("content-security-policy", csp);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", csp);
  return response;
}

export const config = {
  matcher: [
    {
      // Built assets are files, the same for anyone: they need neither check.
      source: "/((?!_next/static|_next/image|favicon.ico).*)",
      // Not for a request with a body: Next reads a body the proxy matches to its end before
      // the route runs (keeping up to 10 MB of it, twice), where the route's reader stops at its
      // cap (lib/api/body.ts). Those requests are checked for their Host by the route
      // (checkMutationRequest, the webhook route); next.config.ts gives any page one a CSP.
      missing: [
        { type: "header", key: "transfer-encoding" },
        { type: "header", key: "content-length", value: "0*[1-9][0-9]*" },
      ],
    },
  ],
};
