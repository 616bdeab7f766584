import { connect, createServer, type Socket } from "node:net";

/**
 * A TCP relay in front of a server (PostgreSQL) that a test can cut: every open connection is
 * destroyed and new ones are refused, as when the database stops or the network between goes.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<{
  port: number;
  cut(): Promise<void>;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const cut = async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  };
  return { port, cut, close: cut };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = "127.0.0.1";
  u.port = String(port);
  return u.toString();
}
