import { z } from "zod";
import { parseInput as parse } from "../input";
import { SimError } from "../newsroom";
import { Random } from "../random";
import type { Scheduler } from "../scheduler";
import type { SimSource } from "../sources";
import { DEFAULT_TICKERS, type DeskEvent, StoryDesk } from "./desk";
import { storySource } from "./http";
import {
  type DeliveryStats,
  makeSecret,
  type WebhookEndpoint,
  type WebhookFaults,
  WebhookSender,
  type WebhookSenderOptions,
} from "./webhooks";

/** The simulator's story API options (`startSimulator({ stories: … })`). */
export interface StoryOptions {
  /** Organic operations a minute in real-time mode (default 6); manual mode has none. */
  ratePerMinute?: number;
  tickers?: readonly string[];
  /** Event retention (default 30 days). */
  retentionMs?: number;
  /** Retry and timeout settings for webhook delivery (tests shorten the backoff). */
  webhooks?: Omit<WebhookSenderOptions, "random">;
}

/** `control.stories`: the story desk and its webhooks, for tests and the control API. */
export interface StoriesControl {
  desk: StoryDesk;
  sender: WebhookSender;
  /** Secrets default to the source's webhookSecrets, so wirewatch can verify with what sources() lists. */
  addWebhook(input: { url: string; secrets?: string[]; tickers?: string[] }): {
    id: string;
    secrets: string[];
  };
  removeWebhook(id: string): boolean;
  webhooks(): WebhookEndpoint[];
  /** Replaces the faults of one endpoint, or (no id) the global ones. */
  webhookFaults(faults: WebhookFaults, endpointId?: string): void;
  clearWebhookFaults(endpointId?: string): void;
  /** Every cursor issued so far answers 410; returns the new epoch. */
  expireCursors(): number;
  /** n random operations now; returns their events. */
  step(n?: number): DeskEvent[];
  webhookStats(): Record<string, DeliveryStats>;
  /** Resolves when every webhook delivery (retries included) has finished or given up. */
  flush(): Promise<void>;
}

export interface StoryService {
  desk: StoryDesk;
  sender: WebhookSender;
  source: SimSource;
  control: StoriesControl;
  stop(): Promise<void>;
}

// The desk, its timing, its webhook faults and its secrets each draw from their own generator,
// derived from the seed: injecting a webhook fault must not change the news, nor the news the
// newsroom's (which keeps its own Random(seed)).
const STREAMS = { desk: 0x5d01, timing: 0x5d02, faults: 0x5d03, secrets: 0x5d04 };

export function createStoryService(deps: {
  seed: number;
  baseUrl: string;
  scheduler: Scheduler;
  manual: boolean;
  /** Runs what is due now (the control API's settle), so operations are stamped "now". */
  settle: () => void;
  options?: StoryOptions;
}): StoryService {
  const options = deps.options ?? {};
  const tickers = options.tickers ?? DEFAULT_TICKERS;
  const desk = new StoryDesk({
    random: new Random(deps.seed + STREAMS.desk),
    clock: () => deps.scheduler.now,
    tickers,
    baseUrl: `${deps.baseUrl}/stories-api`,
    ...(options.retentionMs !== undefined ? { retentionMs: options.retentionMs } : {}),
  });
  const sender = new WebhookSender({
    random: new Random(deps.seed + STREAMS.faults),
    ...options.webhooks,
  });
  desk.onEvent((event) => sender.deliver(event));
  const defaultSecret = makeSecret(new Random(deps.seed + STREAMS.secrets));
  const source = storySource(deps.baseUrl, tickers, [defaultSecret]);

  // Real time only: a Poisson stream of operations. Scheduled before the server runs the backlog
  // up to now, so the lists are not empty at start (20 min × 6 a minute ≈ 120 operations).
  const rate = options.ratePerMinute ?? 6;
  if (!deps.manual && rate > 0) {
    const timing = new Random(deps.seed + STREAMS.timing);
    const tick = () => {
      desk.step();
      deps.scheduler.after(timing.exponential(60_000 / rate), tick);
    };
    deps.scheduler.after(timing.exponential(60_000 / rate), tick);
  }

  const control: StoriesControl = {
    desk,
    sender,
    addWebhook: ({ url, secrets, tickers }) => {
      const added = sender.add({
        url,
        secrets: secrets && secrets.length > 0 ? secrets : [defaultSecret],
        ...(tickers ? { tickers } : {}),
      });
      return { id: added.id, secrets: added.secrets };
    },
    removeWebhook: (id) => sender.remove(id),
    webhooks: () => sender.endpoints(),
    webhookFaults: (faults, endpointId) => sender.setFaults(faults, endpointId),
    clearWebhookFaults: (endpointId) => sender.clearFaults(endpointId),
    expireCursors: () => desk.expireCursors(),
    step: (n = 1) => {
      if (!(Number.isInteger(n) && n >= 0)) throw new SimError("step takes a count ≥ 0");
      deps.settle();
      const events: DeskEvent[] = [];
      for (let i = 0; i < n; i++) events.push(...desk.step());
      return events;
    },
    webhookStats: () => sender.stats(),
    flush: () => sender.flush(),
  };
  return { desk, sender, source, control, stop: () => sender.stop() };
}

const webhookSchema = z.object({
  url: z.url(),
  secrets: z.array(z.string().startsWith("whsec_")).max(10).optional(),
  tickers: z.array(z.string().min(1).max(32)).max(1_000).optional(),
});
const share = z.object({ share: z.number().min(0).max(1) });
const faultsSchema = z
  .object({
    endpointId: z.string().optional(),
    late: z
      .object({
        minMs: z.number().int().min(0).max(600_000),
        maxMs: z.number().int().min(0).max(600_000),
      })
      .refine((l) => l.minMs <= l.maxMs, "minMs must not exceed maxMs")
      .optional(),
    duplicate: share.optional(),
    drop: share.optional(),
  })
  .strict();
const stepSchema = z.object({ n: z.number().int().min(0).max(10_000).default(1) });

/**
 * `/_control/stories/…` (see control.ts for the list); returns the value to answer with.
 * `parts` follow "stories".
 */
export async function handleStoriesControl(
  stories: StoriesControl,
  method: string,
  parts: string[],
  body: unknown,
  url: URL,
): Promise<unknown> {
  const [what, id] = parts;
  if (what === "webhooks" && parts.length === 1 && method === "GET") {
    return { webhooks: stories.webhooks(), stats: stories.webhookStats() };
  }
  if (what === "webhooks" && parts.length === 1 && method === "POST") {
    return stories.addWebhook(parse(webhookSchema, body));
  }
  if (what === "webhooks" && parts.length === 2 && method === "DELETE" && id) {
    return { id, removed: stories.removeWebhook(id) };
  }
  if (what === "webhook-faults" && parts.length === 1 && method === "POST") {
    const { endpointId, ...faults } = parse(faultsSchema, body ?? {});
    stories.webhookFaults(faults, endpointId);
    return { faults: stories.sender.faults() };
  }
  if (what === "webhook-faults" && parts.length === 1 && method === "DELETE") {
    stories.clearWebhookFaults(url.searchParams.get("endpoint") ?? undefined);
    return { faults: stories.sender.faults() };
  }
  if (what === "expire-cursors" && parts.length === 1 && method === "POST") {
    return { epoch: stories.expireCursors() };
  }
  if (what === "step" && parts.length === 1 && method === "POST") {
    return { events: stories.step(parse(stepSchema, body ?? {}).n) };
  }
  if (what === "flush" && parts.length === 1 && method === "POST") {
    await stories.flush();
    return { stats: stories.webhookStats() };
  }
  if (what === "snapshot" && parts.length === 1 && method === "GET") {
    return stories.desk.snapshot();
  }
  throw new SimError(`no control operation ${method} ${url.pathname}`, 404);
}
