import type { Database } from "@/lib/db";
import { type FetchCode, isNetworkFailure } from "./classify";

/**
 * Our own outage is not the sources' fault. When most unrelated hosts fail at the network level
 * at once (DNS, refused, reset), the likelier story is our resolver or uplink, not ten sites going
 * down together; opening ten breakers and disabling feeds would turn one local blip into hours of
 * silence. While an outage lasts, failures are recorded but do not count toward breakers.
 *
 * Kept per process (it is this machine's network), recorded in network_outages for the dashboard.
 */
export interface OutageOptions {
  /** Observations older than 60 s are forgotten: an outage is hosts failing together, now. */
  windowMs?: number;
  /** At least 3 distinct hosts: two failing feeds are just two failing feeds. */
  minHosts?: number;
  /** 80 % of recently seen hosts failing: most, not all (one host may be cached or local). */
  ratio?: number;
  now?: () => number;
}

export interface OutageSnapshot {
  id?: bigint;
  startedAt: Date;
  failingHosts: number;
  totalHosts: number;
}

interface Seen {
  at: number;
  failed: boolean;
}

export class OutageWatch {
  private readonly hosts = new Map<string, Seen>();
  private outage: (OutageSnapshot & { recorded?: Promise<bigint | undefined> }) | null = null;
  private readonly windowMs: number;
  private readonly minHosts: number;
  private readonly ratio: number;
  private readonly now: () => number;

  constructor(options: OutageOptions = {}) {
    this.windowMs = options.windowMs ?? 60_000;
    this.minHosts = options.minHosts ?? 3;
    this.ratio = options.ratio ?? 0.8;
    this.now = options.now ?? Date.now;
  }

  /** True while a local outage is declared: failures then do not count against sources. */
  active(): boolean {
    return this.outage !== null;
  }

  current(): OutageSnapshot | null {
    if (!this.outage) return null;
    const { recorded: _, ...snapshot } = this.outage;
    return snapshot;
  }

  /**
   * Notes one fetch's outcome for its host. A network failure may start an outage; any answer
   * from a host (an HTTP status, even an error one) proves our network works and ends it.
   * Timeouts, TLS errors and refusals by our own policy say nothing either way and are ignored.
   * The decision is made synchronously, before any await, so concurrent fetches declare one
   * outage, not several.
   */
  async observe(db: Database, host: string, code: FetchCode): Promise<void> {
    const failed = isNetworkFailure(code);
    if (!failed && !reachedHost(code)) return;
    const now = this.now();
    this.hosts.set(host, { at: now, failed });
    for (const [h, seen] of this.hosts) if (now - seen.at > this.windowMs) this.hosts.delete(h);
    if (!failed && this.outage) {
      const ended = this.outage;
      this.outage = null;
      const id = ended.id ?? (await ended.recorded);
      if (id !== undefined) {
        await db.prisma.$executeRaw`UPDATE network_outages SET ended_at = now() WHERE id = ${id}`;
      }
      return;
    }
    if (!failed || this.outage) return;
    const total = this.hosts.size;
    const failing = [...this.hosts.values()].filter((s) => s.failed).length;
    if (total < this.minHosts || failing / total < this.ratio) return;
    const outage: OutageSnapshot & { recorded?: Promise<bigint | undefined> } = {
      startedAt: new Date(now),
      failingHosts: failing,
      totalHosts: total,
    };
    this.outage = outage;
    const detail = `${failing} of ${total} hosts failing with dns/connect/reset within ${this.windowMs} ms`;
    outage.recorded = db.prisma.$queryRaw<{ id: bigint }[]>`
      INSERT INTO network_outages (started_at, failing_hosts, total_hosts, detail)
      VALUES (now(), ${failing}::int, ${total}::int, ${detail})
      RETURNING id`.then((rows) => rows[0]?.id);
    outage.id = await outage.recorded;
  }
}

function reachedHost(code: FetchCode): boolean {
  return (
    code === "ok" ||
    code === "not_modified" ||
    code.startsWith("http_") ||
    code === "too_large" ||
    code === "redirect"
  );
}

const globalForOutage = globalThis as unknown as { wirewatchOutage?: OutageWatch };

/** The process's one watch (on globalThis so the dashboard's route handlers see the workers'). */
export function sharedOutageWatch(): OutageWatch {
  globalForOutage.wirewatchOutage ??= new OutageWatch();
  return globalForOutage.wirewatchOutage;
}

/** The local network outage in progress, if any, for the dashboard. */
export function currentOutage(watch: OutageWatch = sharedOutageWatch()): OutageSnapshot | null {
  return watch.current();
}
