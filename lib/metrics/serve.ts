import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { config } from "@/lib/config";
import { logger } from "@/lib/logger";
import { registerMetrics, scrape } from "./registry";

/**
 * `Authorization: Bearer <METRICS_TOKEN>` when the token is set; compared in constant time
 * (both sides hashed first, so neither the length nor a prefix leaks).
 */
export function metricsAuthorized(
  authorization: string | null,
  token = config().METRICS_TOKEN,
): boolean {
  if (!token) return true;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  const given = createHash("sha256")
    .update(match?.[1] ?? "")
    .digest();
  const wanted = createHash("sha256").update(token).digest();
  return timingSafeEqual(given, wanted) && match !== null;
}

/**
 * A worker process's own endpoint (`npm run workers -- --metrics-port N`): its counters and
 * process metrics only, never the database-derived ones (./registry.ts says why). Same token rule.
 */
export async function serveMetrics(port: number, host = "127.0.0.1"): Promise<Server> {
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error("--metrics-port: must be a port number (0-65535)");
  }
  registerMetrics();
  const server = createServer((req, res) => {
    if (req.method !== "GET" || !req.url?.startsWith("/metrics")) {
      res.writeHead(404).end();
      return;
    }
    if (!metricsAuthorized(req.headers.authorization ?? null)) {
      res.writeHead(401, { "www-authenticate": 'Bearer realm="wirewatch metrics"' }).end();
      return;
    }
    scrape().then(
      ({ contentType, body }) => res.writeHead(200, { "content-type": contentType }).end(body),
      (err) => {
        logger().error({ err }, "metrics: scrape failed");
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  logger().info({ port: (server.address() as AddressInfo).port, host }, "metrics endpoint up");
  return server;
}
