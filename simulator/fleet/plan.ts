import type { FeedFormat, Language } from "../outlets";
import { hash, unit } from "./hash";

/**
 * What a fleet feed does, fixed by a hash of its index:
 * - `quiet`: a new item every 2 to 6 hours, with ETag and Last-Modified, so almost every poll
 *   is a 304 (or, for the share without validators, the same body again);
 * - `hot`: a new item about every minute;
 * - `slow`: answers after 2 to 8 s;
 * - `failing`: see `Failure`;
 * - `large`: a 1 to 3 MB document;
 * - `normal`: a new item about every 20 minutes.
 */
export type Behaviour = "quiet" | "hot" | "slow" | "failing" | "large" | "normal";
export const BEHAVIOURS: readonly Behaviour[] = [
  "quiet",
  "hot",
  "slow",
  "failing",
  "large",
  "normal",
];

/**
 * How a failing feed fails: `down` answers 503 always; `flapping` answers 500 in about half of
 * its 10-minute windows and is fine in the others; `timeout` never answers (the socket is held
 * until the client gives up); `recovering` answers 503 from the fleet's start for 5 to 30
 * minutes, then behaves as a normal feed.
 */
export type Failure = "down" | "flapping" | "timeout" | "recovering";
const FAILURES: readonly (readonly [Failure, number])[] = [
  ["down", 0.4],
  ["flapping", 0.25],
  ["timeout", 0.2],
  ["recovering", 0.15],
];

export type Shares = Record<Exclude<Behaviour, "normal">, number>;

// The brief's mix: most feeds are quiet, a few percent each are hot, slow, failing and large.
export const DEFAULT_SHARES: Shares = {
  quiet: 0.9,
  hot: 0.03,
  slow: 0.02,
  failing: 0.02,
  large: 0.01,
};

export interface FleetOptions {
  /** How many feeds (1 to 1,000,000). */
  sources: number;
  /**
   * Feeds per loopback address (default 100: 1,000 hosts for 100,000 feeds), so a per-host
   * politeness budget meets thousands of hosts, each with a realistic handful of feeds.
   */
  feedsPerHost?: number;
  /** The poll interval the listed sources ask for (default 300 s, wirewatch's default). */
  pollIntervalSeconds?: number;
  /** Shares of each behaviour; what they leave is `normal`. */
  shares?: Partial<Shares>;
  /** Share of quiet and normal feeds that send no validators: the same body again instead of 304. */
  noValidatorsShare?: number;
  /** Share of new items that carry a story from the common pool, republished across feeds. */
  republishShare?: number;
  /** About how many feeds carry each pooled story (default 6): the dedup's clusters. */
  copiesPerStory?: number;
  /** Items in a feed document (default 20). */
  itemsPerFeed?: number;
  /** A slow feed's delay range in ms (default [2000, 8000]). */
  slowMs?: readonly [number, number];
  /** How long a `timeout` feed holds a request before dropping it (default 60 s). */
  timeoutHoldMs?: number;
  /**
   * `per-host` (default): one listener per loopback address, nothing reachable from the network.
   * `any`: one listener on 0.0.0.0, which answers every 127.x.y.z address on the port but also
   * the machine's own addresses: for systems where binding thousands of addresses is refused.
   */
  bind?: "per-host" | "any";
  /** The one port every fleet host listens on (default 0: a free one). */
  port?: number;
}

export interface FeedProfile {
  index: number;
  behaviour: Behaviour;
  failure: Failure | null;
  format: FeedFormat;
  language: Language;
  validators: boolean;
  /** New items come in slots: each slot of `slotMs` holds one with probability `p`. */
  slotMs: number;
  p: number;
  /** A large feed's target document size in bytes; 0 for the others. */
  largeBytes: number;
}

export interface FleetPlan {
  seed: number;
  size: number;
  hosts: number;
  feedsPerHost: number;
  pollIntervalSeconds: number;
  shares: Shares;
  noValidatorsShare: number;
  republishShare: number;
  copiesPerStory: number;
  itemsPerFeed: number;
  slowMs: readonly [number, number];
  timeoutHoldMs: number;
  bind: "per-host" | "any";
  port: number;
  /** Stories in the common pool per language per POOL_SLOT_MS. */
  poolSize: Record<Language, number>;
}

export const MAX_SOURCES = 1_000_000;
/**
 * Each host is a listening socket, so a file descriptor: 20,000 hosts stay under common
 * `ulimit -n` settings with room for the client's connections (10,000 by default is 100 feeds
 * per host at 1,000,000 feeds).
 */
export const MAX_HOSTS = 20_000;
/** Pooled stories are republished within this window of each other. */
export const POOL_SLOT_MS = 5 * 60_000;

const LANGUAGE_SHARE: Record<Language, number> = { en: 0.6, bn: 0.4 };

// Hash tags: the fourth input names what a hash decides, so two decisions never share one.
export const TAG = {
  behaviour: 1,
  failure: 2,
  format: 3,
  language: 4,
  validators: 5,
  quietGap: 6,
  large: 7,
  exists: 8,
  offset: 9,
  item: 10,
  pool: 11,
  slow: 12,
  flap: 13,
  recover: 14,
  pad: 15,
} as const;

export class FleetOptionsError extends Error {
  constructor(message: string) {
    super(`fleet: ${message}`);
    this.name = "FleetOptionsError";
  }
}

function share(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!(v >= 0 && v <= 1)) throw new FleetOptionsError(`${name} must be between 0 and 1, not ${v}`);
  return v;
}

function whole(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new FleetOptionsError(`${name} must be a whole number from ${min} to ${max}, not ${v}`);
  }
  return v;
}

/** Checks the options and works out everything that depends only on them. */
export function planFleet(seed: number, options: FleetOptions): FleetPlan {
  const size = whole("sources", options.sources, 0, 1, MAX_SOURCES);
  const feedsPerHost = whole("feedsPerHost", options.feedsPerHost, 100, 1, MAX_SOURCES);
  const hosts = Math.ceil(size / feedsPerHost);
  if (hosts > MAX_HOSTS) {
    throw new FleetOptionsError(
      `${size} feeds at ${feedsPerHost} per host need ${hosts} hosts, over ${MAX_HOSTS} (one listening socket each); raise feedsPerHost`,
    );
  }
  const shares = { ...DEFAULT_SHARES };
  for (const key of Object.keys(shares) as (keyof Shares)[]) {
    shares[key] = share(`shares.${key}`, options.shares?.[key], DEFAULT_SHARES[key]);
  }
  const total = Object.values(shares).reduce((a, b) => a + b, 0);
  if (total > 1 + 1e-9) throw new FleetOptionsError(`the shares add up to ${total}, over 1`);
  const slowMs = options.slowMs ?? [2_000, 8_000];
  if (!(slowMs[0] >= 0 && slowMs[1] >= slowMs[0])) {
    throw new FleetOptionsError(
      `slowMs must be [min, max] with 0 ≤ min ≤ max, not [${slowMs.join(", ")}]`,
    );
  }
  const bind = options.bind ?? "per-host";
  if (bind !== "per-host" && bind !== "any") {
    throw new FleetOptionsError(`bind must be "per-host" or "any", not "${String(bind)}"`);
  }
  const plan: FleetPlan = {
    seed: seed >>> 0,
    size,
    hosts,
    feedsPerHost,
    pollIntervalSeconds: whole("pollIntervalSeconds", options.pollIntervalSeconds, 300, 5, 86_400),
    shares,
    noValidatorsShare: share("noValidatorsShare", options.noValidatorsShare, 0.1),
    republishShare: share("republishShare", options.republishShare, 0.3),
    copiesPerStory: whole("copiesPerStory", options.copiesPerStory, 6, 1, 10_000),
    itemsPerFeed: whole("itemsPerFeed", options.itemsPerFeed, 20, 1, 500),
    slowMs: [slowMs[0], slowMs[1]],
    timeoutHoldMs: whole("timeoutHoldMs", options.timeoutHoldMs, 60_000, 0, 3_600_000),
    bind,
    port: whole("port", options.port, 0, 0, 65_535),
    poolSize: { en: 1, bn: 1 },
  };
  // Size the pool so each pooled story is carried by about copiesPerStory feeds: expected new
  // items per pool window across the fleet, times the republished share, over the copies.
  const itemsPerMs = expectedItemsPerMs(plan);
  for (const lang of ["en", "bn"] as const) {
    const republished = itemsPerMs * POOL_SLOT_MS * plan.republishShare * LANGUAGE_SHARE[lang];
    plan.poolSize[lang] = Math.max(1, Math.round(republished / plan.copiesPerStory));
  }
  return plan;
}

/** Expected new items per ms over the whole fleet (the mean of each behaviour's cadence). */
export function expectedItemsPerMs(plan: FleetPlan): number {
  const quietP = QUIET_GAP_SLOTS.reduce((sum, g) => sum + 1 / g, 0) / QUIET_GAP_SLOTS.length;
  const rate = (b: Behaviour) => {
    const c = CADENCE[b];
    return (b === "quiet" ? quietP : c.p) / c.slotMs;
  };
  const normalShare = 1 - Object.values(plan.shares).reduce((a, b) => a + b, 0);
  const perFeed =
    (Object.keys(plan.shares) as (keyof Shares)[]).reduce(
      (sum, b) => sum + plan.shares[b] * rate(b),
      0,
    ) +
    normalShare * rate("normal");
  return perFeed * plan.size;
}

// Quiet: hourly slots, each with a 1-in-2 to 1-in-6 chance (per feed) of an item: a new item
// every 2 to 6 hours, so a 5-minute poll sees a change about 1 time in 24 to 72.
const QUIET_GAP_SLOTS = [2, 3, 4, 5, 6];
const CADENCE: Record<Behaviour, { slotMs: number; p: number }> = {
  quiet: { slotMs: 3_600_000, p: 1 / 4 },
  // Hot: 30 s slots, half of them with an item: one a minute on average, rarely two in a row.
  hot: { slotMs: 30_000, p: 0.5 },
  // Large documents change hourly: each change costs the client megabytes.
  large: { slotMs: 1_800_000, p: 0.5 },
  slow: { slotMs: 600_000, p: 0.5 },
  failing: { slotMs: 600_000, p: 0.5 },
  normal: { slotMs: 600_000, p: 0.5 },
};

/** Picks from cumulative weights by a unit value. */
function pickBy<T>(u: number, table: readonly (readonly [T, number])[]): T {
  const total = table.reduce((sum, [, w]) => sum + w, 0);
  let r = u * total;
  for (const [item, w] of table) {
    r -= w;
    if (r < 0) return item;
  }
  return (table[table.length - 1] as readonly [T, number])[0];
}

/** What feed `index` does: a pure function of the seed, the index and the options. */
export function profile(plan: FleetPlan, index: number): FeedProfile {
  const { seed, shares } = plan;
  const behaviour = pickBy<Behaviour>(unit(seed, index, 0, TAG.behaviour), [
    ["quiet", shares.quiet],
    ["hot", shares.hot],
    ["slow", shares.slow],
    ["failing", shares.failing],
    ["large", shares.large],
    ["normal", Math.max(0, 1 - Object.values(shares).reduce((a, b) => a + b, 0))],
  ]);
  const cadence = CADENCE[behaviour];
  const p =
    behaviour === "quiet"
      ? 1 / (QUIET_GAP_SLOTS[hash(seed, index, 0, TAG.quietGap) % QUIET_GAP_SLOTS.length] as number)
      : cadence.p;
  return {
    index,
    behaviour,
    failure: behaviour === "failing" ? pickBy(unit(seed, index, 0, TAG.failure), FAILURES) : null,
    // Most sites serve RSS 2.0; Atom is common, RSS 1.0 survives on a few.
    format: pickBy<FeedFormat>(unit(seed, index, 0, TAG.format), [
      ["rss2", 0.8],
      ["atom", 0.15],
      ["rdf", 0.05],
    ]),
    language: unit(seed, index, 0, TAG.language) < LANGUAGE_SHARE.en ? "en" : "bn",
    validators:
      !(behaviour === "quiet" || behaviour === "normal") ||
      unit(seed, index, 0, TAG.validators) >= plan.noValidatorsShare,
    slotMs: cadence.slotMs,
    p,
    largeBytes:
      behaviour === "large"
        ? 1_000_000 + Math.floor(unit(seed, index, 0, TAG.large) * 2_000_000)
        : 0,
  };
}

/**
 * Host `h`'s loopback address: 127.1.0.1 upwards, 250 to a /24 (never .0 or .255, which some
 * tools read as network and broadcast addresses), clear of 127.0.0.1 where the newsroom listens.
 */
export function hostAddress(h: number): string {
  return `127.${1 + Math.floor(h / 64_000)}.${Math.floor(h / 250) % 256}.${(h % 250) + 1}`;
}

/** The host index of a fleet address, or null for any other address. */
export function hostIndex(address: string): number | null {
  const m = /^(?:::ffff:)?127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (!m) return null;
  const [b, c, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (b < 1 || b > 255 || c > 255 || d < 1 || d > 250) return null;
  const h = (b - 1) * 64_000 + c * 250 + (d - 1);
  return hostAddress(h) === `127.${b}.${c}.${d}` ? h : null;
}

/** Feeds are dealt round-robin over the hosts: every host gets the same number, ±1. */
export const hostOf = (plan: FleetPlan, index: number): number => index % plan.hosts;

/** `fleet-000042`: ids sort in index order. */
export function feedId(plan: FleetPlan, index: number): string {
  return `fleet-${String(index).padStart(Math.max(6, String(plan.size - 1).length), "0")}`;
}
