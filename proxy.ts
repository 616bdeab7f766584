import { type NextRequest, NextResponse } from "next/server";
import { newNonce, pageCsp } from "@/lib/auth/csp";
import { config as settings } from "@/lib/config";

/**
 * Every page gets a Content-Security-Policy with a fresh nonce (docs/decisions/009). The nonce
 * rides on the request's CSP header, where Next.js finds it and puts it on its scripts; this is
 * why the root layout renders on each request. Not an access check: every route handler checks
 * the session itself (lib/auth/guard.ts).
 */
export function proxy(request: NextRequest): NextResponse {
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
      // Pages only: API answers get theirs from next.config.ts; built assets need none.
      source: "/((?!api/|_next/static|_next/image|favicon.ico).*)",
      missing: [
        { type: "header", key: "next-router-prefetch" },
        { type: "header", key: "purpose", value: "prefetch" },
      ],
    },
  ],
};
