import { get, type IncomingMessage } from "node:http";
import { createParser, type EventSourceMessage } from "eventsource-parser";

/** What a test sees of one SSE connection: every event, every comment, and when bytes arrived. */
export interface SseRecording {
  response: IncomingMessage;
  events: (EventSourceMessage & { receivedAt: number })[];
  comments: string[];
  /** Body bytes received, to prove a stalled stream sends nothing at all. */
  bytes: number;
  closed: boolean;
  error?: Error;
  waitFor(check: () => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** Opens a stream with node:http (not fetch) so the test controls the socket's life. */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseRecording> {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers: { accept: "text/event-stream", ...headers } }, (response) => {
      const rec: SseRecording = {
        response,
        events: [],
        comments: [],
        bytes: 0,
        closed: false,
        waitFor: (check, timeoutMs = 2_000) => waitFor(check, timeoutMs),
        close: () => req.destroy(),
      };
      const parser = createParser({
        onEvent: (e) => rec.events.push({ ...e, receivedAt: performance.now() }),
        onComment: (c) => rec.comments.push(c),
      });
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        rec.bytes += Buffer.byteLength(chunk);
        parser.feed(chunk);
      });
      response.on("close", () => {
        rec.closed = true;
      });
      response.on("error", (err) => {
        rec.error = err;
      });
      resolve(rec);
    });
    req.on("error", reject);
  });
}

export async function waitFor(check: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
