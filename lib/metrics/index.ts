/**
 * Every Prometheus metric wirewatch exports (served at GET /api/metrics), in four parts:
 * definitions.ts (every metric, its help text and bounded labels), subscriptions.ts (the own
 * metrics counted from lib/events.ts), snapshot.ts (the database-derived metrics' scrape-time
 * queries) and serve.ts (bearer auth, a worker process's own endpoint); registry.ts ties them
 * together and says which process exports what.
 */
export { LabelGuard, LIMITS } from "./labels";
export { registerMetrics, type ScrapeOptions, scrape } from "./registry";
export { metricsAuthorized, serveMetrics } from "./serve";
