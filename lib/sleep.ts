/** Waits `ms`, or less if `signal` aborts first (it resolves then; it never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  // An abort listener added after the abort never fires: check first, or a loop that was told to
  // stop while it was busy would sleep out its whole interval.
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
