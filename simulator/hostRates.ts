/** How hard one host was hit, as the simulator saw it. */
export interface HostRate {
  /** The Host header as sent (host:port): what a client's per-host budget is keyed on. */
  host: string;
  requests: number;
  /** The most requests that arrived within any 1 s window (at least this many if `saturated`). */
  maxPerSecond: number;
  /** Arrival (epoch ms) of the request that closed that busiest window. */
  maxAt: number;
  /** The busiest window held more requests than the ring remembers: `maxPerSecond` is a floor. */
  saturated: boolean;
}

/**
 * Per-host request rates without keeping every request: per host a ring of its last RING
 * arrival times and a running maximum of arrivals in any 1 s window. The busiest window always
 * ends at an arrival, so counting the ring's entries within 1 s before each arrival finds it
 * exactly, up to RING + 1 requests a second; beyond that the maximum is reported as RING + 1 and
 * `saturated`. 16 is well above any polite budget (wirewatch's is 1 request/s with a burst of
 * 5), so a client that breaks it is still caught, at 128 bytes of ring per host.
 *
 * Hosts live in flat typed arrays indexed through one Map, so 10,000 hosts cost about 1.5 MB
 * and no object per host; past `maxHosts` new hosts are only counted in `untracked`.
 */
export class HostRates {
  static readonly RING = 16;
  static readonly WINDOW_MS = 1_000;

  readonly #slots = new Map<string, number>();
  readonly #hosts: string[] = [];
  readonly #maxHosts: number;
  #ring = new Float64Array(0);
  #next = new Uint8Array(0);
  #filled = new Uint8Array(0);
  #requests = new Float64Array(0);
  #max = new Uint16Array(0);
  #maxAt = new Float64Array(0);
  #untracked = 0;

  constructor(maxHosts = 65_536) {
    this.#maxHosts = maxHosts;
  }

  record(host: string, at: number): void {
    const slot = this.#slot(host);
    if (slot === -1) {
      this.#untracked += 1;
      return;
    }
    const ring = HostRates.RING;
    const base = slot * ring;
    const filled = this.#filled[slot] as number;
    let inWindow = 1;
    for (let j = 0; j < filled; j++) {
      const t = this.#ring[base + j] as number;
      if (t > at - HostRates.WINDOW_MS && t <= at) inWindow += 1;
    }
    const next = this.#next[slot] as number;
    this.#ring[base + next] = at;
    this.#next[slot] = (next + 1) % ring;
    if (filled < ring) this.#filled[slot] = filled + 1;
    this.#requests[slot] = (this.#requests[slot] as number) + 1;
    if (inWindow > (this.#max[slot] as number)) {
      this.#max[slot] = inWindow;
      this.#maxAt[slot] = at;
    }
  }

  /** Every host seen, busiest window first. */
  list(): HostRate[] {
    return this.#hosts
      .map((host, slot) => this.#rate(host, slot))
      .sort((a, b) => b.maxPerSecond - a.maxPerSecond || a.host.localeCompare(b.host));
  }

  get(host: string): HostRate | null {
    const slot = this.#slots.get(host);
    return slot === undefined ? null : this.#rate(host, slot);
  }

  /** The host hit hardest in any 1 s window; null before any request. */
  busiest(): HostRate | null {
    let best = -1;
    for (let slot = 0; slot < this.#hosts.length; slot++) {
      if (best === -1 || (this.#max[slot] as number) > (this.#max[best] as number)) best = slot;
    }
    return best === -1 ? null : this.#rate(this.#hosts[best] as string, best);
  }

  get hosts(): number {
    return this.#hosts.length;
  }

  /** Requests from hosts past `maxHosts`, not rated. */
  get untracked(): number {
    return this.#untracked;
  }

  clear(): void {
    this.#slots.clear();
    this.#hosts.length = 0;
    this.#untracked = 0;
    this.#grow(0);
  }

  #rate(host: string, slot: number): HostRate {
    const max = this.#max[slot] as number;
    return {
      host,
      requests: this.#requests[slot] as number,
      maxPerSecond: max,
      maxAt: this.#maxAt[slot] as number,
      saturated: max > HostRates.RING,
    };
  }

  #slot(host: string): number {
    const known = this.#slots.get(host);
    if (known !== undefined) return known;
    if (this.#hosts.length >= this.#maxHosts) return -1;
    const slot = this.#hosts.length;
    if (slot >= this.#max.length) this.#grow(Math.min(this.#maxHosts, Math.max(64, slot * 2)));
    this.#slots.set(host, slot);
    this.#hosts.push(host);
    return slot;
  }

  /** Doubling keeps the cost of growth linear; `capacity` 0 frees everything. */
  #grow(capacity: number): void {
    const copy = <T extends Float64Array | Uint8Array | Uint16Array>(
      old: T,
      make: (n: number) => T,
      per = 1,
    ): T => {
      const fresh = make(capacity * per);
      if (capacity > 0) fresh.set(old.subarray(0, Math.min(old.length, capacity * per)));
      return fresh;
    };
    this.#ring = copy(this.#ring, (n) => new Float64Array(n), HostRates.RING);
    this.#next = copy(this.#next, (n) => new Uint8Array(n));
    this.#filled = copy(this.#filled, (n) => new Uint8Array(n));
    this.#requests = copy(this.#requests, (n) => new Float64Array(n));
    this.#max = copy(this.#max, (n) => new Uint16Array(n));
    this.#maxAt = copy(this.#maxAt, (n) => new Float64Array(n));
  }
}
