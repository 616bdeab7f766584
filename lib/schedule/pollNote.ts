/**
 * What the source page says about polling that is faster than the source's configured interval.
 * A hot source (news just arrived: fetchStage keeps it hot for 10 min) is polled at a quarter of
 * its interval, at least every 15 s (nextPoll.ts); that is the spec's "hot sources are polled
 * faster", and it must never happen unannounced (docs/decisions/011): a 60 s source re-polled
 * every ~15 s for ten minutes is four times the requests its operator configured. (A failing
 * source re-checked sooner than its interval is shown the same way, without "while hot".)
 */
export interface PollingFacts {
  configuredSeconds: number;
  /** The delay the scheduler chose after the latest poll (source_state.poll_every_seconds). */
  everySeconds: number | null;
  hotUntil: Date | null;
  now: Date;
}

// The scheduler spreads polls by ±10 %; a delay within that of the interval is not "faster".
const JITTER = 0.9;

export function pollingNote(f: PollingFacts): string | null {
  if (f.everySeconds === null || f.everySeconds >= f.configuredSeconds * JITTER) return null;
  const hot = f.hotUntil !== null && f.hotUntil.getTime() > f.now.getTime();
  const why = hot ? ` while hot (until ${f.hotUntil?.toISOString().slice(11, 16)} UTC)` : "";
  return `polled every ${seconds(f.everySeconds)}${why}, faster than the configured ${seconds(f.configuredSeconds)}`;
}

function seconds(s: number): string {
  if (s < 60 || s % 60 !== 0) return `${s} s`;
  return s % 3600 === 0 ? `${s / 3600} h` : `${s / 60} min`;
}
