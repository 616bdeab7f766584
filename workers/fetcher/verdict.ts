import type { BreakerConfig, BreakerState } from "@/lib/breaker";
import type { Database } from "@/lib/db";
import type { Attempt } from "./attempt";
import { disableSource } from "./breaker/disableSource";
import { recordFailure } from "./breaker/recordFailure";
import { recordSuccess } from "./breaker/recordSuccess";
import { releaseProbe } from "./breaker/releaseProbe";
import { countsAgainstBreaker, isSuccess } from "./classify";
import type { OutageWatch } from "./outage";

export interface Verdict {
  /** The breaker after this poll; opened when this poll opened it. */
  breaker?: { state: BreakerState; opened: boolean };
  /** A local network outage is declared: the failure was not held against the source. */
  outage: boolean;
}

/**
 * What one poll's final outcome does to its source, once per poll, after the caller read the
 * body (a 200 that did not parse arrives here as parse_error). Success (a 200 that parsed, a
 * 304) closes the breaker. While our own
 * network is out (outage.ts), failures neither count nor disable. 404/410 disable the source
 * without counting. Other failures count toward the breaker, one for every failed request of the
 * poll (a failed probe reopens it). A
 * probe that ends without any of these verdicts hands its slot back.
 */
export async function recordVerdict(
  db: Database,
  sourceId: string,
  host: string | null,
  final: Attempt,
  breaker: BreakerConfig,
  outageWatch: OutageWatch,
  probeToken?: string,
  failedRequests = 1,
): Promise<Verdict> {
  if (host) await outageWatch.observe(db, host, final.code);
  if (isSuccess(final.code)) {
    const state = await recordSuccess(db, sourceId);
    return { outage: false, breaker: state ? { state, opened: false } : undefined };
  }
  const outage = outageWatch.active();
  let verdict: Verdict["breaker"];
  if (!outage && (final.code === "http_404" || final.code === "http_410")) {
    await disableSource(db, sourceId, final.code, final.message);
  } else if (!outage && countsAgainstBreaker(final.code)) {
    const failure = await recordFailure(db, sourceId, breaker, {
      code: final.code,
      probeToken,
      failedRequests,
    });
    if (failure) verdict = { state: failure.state, opened: failure.opened };
  }
  if (probeToken && !verdict) await releaseProbe(db, sourceId, probeToken);
  return { outage, breaker: verdict };
}
