import type { NextConfig } from "next";
import { API_HEADERS, SECURITY_HEADERS } from "./lib/auth/headers";

// Response headers for every route (docs/decisions/009). The pages' Content-Security-Policy
// carries a per-request nonce, so proxy.ts sets it; API answers get a fixed one here.
const bodyHeaders = [
  { type: "header" as const, key: "transfer-encoding" },
  { type: "header" as const, key: "content-length", value: "0*[1-9][0-9]*" },
];
// The login page and the auth API are never kept by a browser or a proxy (every API answer made
// with lib/api/respond.ts says no-store too).
const noStore = [{ key: "Cache-Control", value: "no-store" }];

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // `next build` would type-check the whole project (tsconfig includes bench/, cli/ and every
  // test), so a type error in a benchmark would stop `npm start`. Types are checked once, by
  // `npm run typecheck` (tsc --noEmit) in `npm test` and CI; the build only compiles.
  typescript: { ignoreBuildErrors: true },
  // Loaded with Node's own require instead of being bundled: PGlite reads its WASM and data
  // files next to its module at run time, and the drivers open sockets or native handles.
  // (@prisma/client, pg and pino are on Next's built-in list too; naming them keeps the list
  // in one place.)
  serverExternalPackages: [
    "@electric-sql/pglite",
    "pglite-prisma-adapter",
    "@prisma/adapter-pg",
    "@prisma/client",
    "pg",
    "pino",
    // Drives the system Chromium for pages rendered in a browser (workers/fetcher/browser.ts).
    "playwright-core",
  ],
  async headers() {
    return [
      { source: "/:path*", headers: SECURITY_HEADERS },
      { source: "/api/:path*", headers: API_HEADERS },
      // A page request with a body is the one kind proxy.ts does not see (it would make Next
      // read the body to its end first), so it gets no nonce: its answer gets the API's CSP,
      // which runs no script at all. The dashboard never sends one (docs/decisions/013).
      ...bodyHeaders.map((has) => ({
        source: "/((?!api/).*)",
        has: [has],
        headers: API_HEADERS,
      })),
      { source: "/login", headers: noStore },
      { source: "/api/auth/:path*", headers: noStore },
    ];
  },
};

export default nextConfig;
