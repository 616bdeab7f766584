import { createHash } from "node:crypto";
import { once, setMaxListeners } from "node:events";
import { createWriteStream } from "node:fs";
import { createServer } from "node:http";
import type { RequestLog } from "../requestLog";
import type { SimSource } from "../sources";
import { feedUrl, fleetItems, fleetOutlet } from "./feeds";
import { createFleetHandler, type FleetStats } from "./http";
import { listenFleet } from "./listen";
import {
  type FeedProfile,
  type FleetOptions,
  type FleetPlan,
  hostAddress,
  planFleet,
  profile,
} from "./plan";

export type { FleetStats } from "./http";
export type { Behaviour, Failure, FeedProfile, FleetOptions } from "./plan";
export { FleetOptionsError } from "./plan";

/** Many feeds on many loopback hosts (see the README's "Fleet" section). */
export interface Fleet {
  size: number;
  hosts: number;
  port: number;
  bind: "per-host" | "any";
  /** The N feeds as wirewatch sources, in index order. */
  sources(): SimSource[];
  source(index: number): SimSource;
  /** What feed `index` does (behaviour, failure, format, language, validators, cadence). */
  profile(index: number): FeedProfile;
  /** Host `h`'s address (0 ≤ h < hosts). */
  hostAddress(h: number): string;
  /** The items feed `index` serves at simulated time `at` (default now), newest first. */
  items(index: number, at?: number): ReturnType<typeof fleetItems>;
  /** Writes the sources as a wirewatch.config.json body, streamed: 100,000 sources in a few MB of heap. */
  writeSources(file: string): Promise<number>;
  stats(): FleetStats;
  /** How often feed `index` was asked for. */
  polls(index: number): number;
  stop(): Promise<void>;
}

export async function startFleet(
  options: FleetOptions,
  deps: { seed: number; now: () => number; log: RequestLog },
): Promise<Fleet> {
  const plan: FleetPlan = planFleet(deps.seed, options);
  const http = createServer();
  // Keep-alive as a busy site keeps it: a poller's next request may reuse the socket.
  http.keepAliveTimeout = 5_000;
  const listening = await listenFleet(plan, http);
  plan.port = listening.port;
  // Every option that shapes a document, the port included (links carry it), names it in the
  // ETag: a fleet restarted otherwise never answers 304 to an old validator.
  const fingerprint = createHash("sha256")
    .update(JSON.stringify(plan))
    .digest("base64url")
    .slice(0, 8);
  const stopping = new AbortController();
  // Every held or slowed request listens for the stop: hundreds at once are expected here.
  setMaxListeners(0, stopping.signal);
  const handler = createFleetHandler({
    plan,
    now: deps.now,
    startedAt: deps.now(),
    log: deps.log,
    stopping: stopping.signal,
    fingerprint,
  });
  http.on("request", (req, res) => {
    handler.handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      res.end(`fleet: ${(err as Error).message}\n`);
    });
  });

  const checked = (index: number): number => {
    if (!(Number.isInteger(index) && index >= 0 && index < plan.size)) {
      throw new RangeError(`fleet: no feed ${index} (0 to ${plan.size - 1})`);
    }
    return index;
  };
  const source = (index: number): SimSource => {
    const outlet = fleetOutlet(plan, profile(plan, checked(index)));
    return {
      id: outlet.id,
      name: outlet.name,
      kind: "feed",
      url: feedUrl(plan, index),
      allowPrivate: true,
      collectors: ["A"],
      pollIntervalSeconds: plan.pollIntervalSeconds,
    };
  };

  return {
    size: plan.size,
    hosts: plan.hosts,
    port: plan.port,
    bind: plan.bind,
    sources: () => Array.from({ length: plan.size }, (_, i) => source(i)),
    source,
    profile: (index) => profile(plan, checked(index)),
    hostAddress: (h) => hostAddress(h),
    items: (index, at) => fleetItems(plan, profile(plan, checked(index)), at ?? deps.now()),
    writeSources: async (file) => {
      const out = createWriteStream(file, { encoding: "utf8" });
      const failed = new Promise<never>((_, reject) => out.once("error", reject));
      // Raced below; marked handled so an early open error is not reported twice.
      failed.catch(() => {});
      const write = async (chunk: string) => {
        if (!out.write(chunk)) await Promise.race([once(out, "drain"), failed]);
      };
      await write('{\n  "sources": [\n');
      for (let i = 0; i < plan.size; i++) {
        await write(`    ${JSON.stringify(source(i))}${i + 1 < plan.size ? "," : ""}\n`);
      }
      await write("  ]\n}\n");
      out.end();
      await Promise.race([once(out, "finish"), failed]);
      return plan.size;
    },
    stats: handler.stats,
    polls: handler.polls,
    stop: async () => {
      stopping.abort();
      await listening.close();
    },
  };
}
