/**
 * Runs once per server process; Next.js waits for register() before it serves a request, so
 * the database is open and migrated by the time the first page or health check asks for it.
 * A fresh PGlite data directory takes a few seconds to initialise; doing it here means no
 * request pays for that.
 */
export async function register(): Promise<void> {
  // NEXT_RUNTIME is replaced by Next at build time (it is not configuration), which keeps the
  // Node-only database code out of the edge bundle.
  if (process.env.NEXT_RUNTIME === "nodejs") {
    // First, so that every request Next handles carries its socket's peer address
    // (lib/auth/peer.ts): route handlers have no other way to know who is asking.
    const { installPeerStamp } = await import("./lib/auth/peer");
    installPeerStamp();
    // The public read path is answered before Next routes it, at a fraction of the cost
    // (lib/readmodel/directPath.ts, docs/decisions/031).
    const { installPublicReadDirectPath } = await import("./lib/readmodel/directPath");
    installPublicReadDirectPath();
    const { startServer } = await import("./instrumentation-node");
    await startServer();
  }
}
