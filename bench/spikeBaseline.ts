/**
 * The spike bench's baseline: a bare node:http server answering every GET with the same bytes
 * and headers the app gave for the target once, in a child process of its own (as the app is),
 * so the ratio says what the app's read path costs beyond Node's HTTP floor on this machine.
 */
import { type ChildProcess, fork } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

/** Hop-by-hop or per-response headers: the bare server's own HTTP stack sets these. */
const NOT_COPIED = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "date",
]);

export interface Baseline {
  origin: string;
  stop(): Promise<void>;
}

/** The headers of an app response worth replaying: all but hop-by-hop and per-response ones. */
export function replayHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || NOT_COPIED.has(name)) continue;
    kept[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return kept;
}

/**
 * One answer of the app as the driver gets it: node:http with the driver's request headers, so
 * the bytes are the ones on the wire (fetch would decompress them and keep Content-Encoding).
 */
export function fetchOnce(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: Buffer; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks),
          headers: replayHeaders(res.headers),
        }),
      );
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: no answer within 30 s`)));
    req.on("error", reject);
  });
}

export async function startBaseline(
  body: Buffer,
  headers: Record<string, string>,
): Promise<Baseline> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ["--spike-baseline"], {
    execArgv: ["--import", "tsx"],
    serialization: "advanced",
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.on("message", (m: { type: string; port?: number }) => {
      if (m.type === "ready") child.send({ type: "serve", body, headers });
      else if (m.type === "listening" && m.port) resolve(m.port);
    });
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`baseline server exited with ${code}`)));
  });
  return {
    origin: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

if (process.argv.includes("--spike-baseline") && process.send) {
  process.on(
    "message",
    (m: { type: string; body: Uint8Array; headers: Record<string, string> }) => {
      if (m.type !== "serve") return;
      const body = Buffer.from(m.body);
      const headers = { ...m.headers, "content-length": String(body.length) };
      const server = http.createServer((req, res) => {
        res.writeHead(200, headers);
        res.end(req.method === "HEAD" ? undefined : body);
      });
      server.listen(0, "127.0.0.1", () => {
        process.send?.({ type: "listening", port: (server.address() as AddressInfo).port });
      });
      process.once("SIGTERM", () => {
        server.close(() => process.exit(0));
        server.closeAllConnections();
      });
    },
  );
  process.send({ type: "ready" });
}
