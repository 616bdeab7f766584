import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Database } from "@/lib/db";

export interface TestServer {
  /** http://127.0.0.1:port */
  origin: string;
  port: number;
  /** TCP connections accepted so far: "no connection made" is checked here. */
  connections(): number;
  /** Requests for a path (robots.txt included). */
  hits(path?: string): number;
  close(): Promise<void>;
}

/** A server on 127.0.0.1 only (the tests have no internet and must not listen beyond it). */
export async function startServer(handler: http.RequestListener): Promise<TestServer> {
  let connections = 0;
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    hits.set("*", (hits.get("*") ?? 0) + 1);
    handler(req, res);
  });
  server.on("connection", () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    connections: () => connections,
    hits: (path = "*") => hits.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A resolver that maps every name to one address, counting its calls. */
export function fixedResolver(address = "127.0.0.1") {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    return [address];
  };
  return Object.assign(resolver, { calls });
}

/** Inserts sources rows (source_state is created by the first poll). */
export async function createSources(db: Database, ids: string[], url = "http://x/"): Promise<void> {
  for (const id of ids) {
    await db.prisma.source.create({ data: { id, name: id, kind: "feed", url } });
  }
}

export const noSleep = async () => {};
