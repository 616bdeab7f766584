import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface CallbackServer {
  /** http://127.0.0.1:<port>: the callback base (WIREWATCH_WEBSUB_CALLBACK_URL). */
  url: string;
  close(): Promise<void>;
}

/**
 * The callback route handlers (app/api/websub/[token]/route.ts) behind a real socket, called as
 * Next.js calls them, so a hub reaches them over HTTP without a Next server. They use getDb():
 * the caller puts its database on globalThis.wirewatchDb first.
 */
export async function startCallbackServer(): Promise<CallbackServer> {
  let base = "";
  const server = createServer((req, res) => {
    serveRoute(base, req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function serveRoute(base: string, req: IncomingMessage, res: ServerResponse) {
  const { GET, POST } = await import("@/app/api/websub/[token]/route");
  const url = new URL(req.url ?? "/", base);
  const token = decodeURIComponent(url.pathname.split("/").pop() ?? "");
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const request = new Request(url, {
    method: req.method,
    headers,
    body: req.method === "POST" ? Buffer.concat(chunks) : undefined,
  });
  const handler = req.method === "POST" ? POST : GET;
  const response = await handler(request, { params: Promise.resolve({ token }) });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}
