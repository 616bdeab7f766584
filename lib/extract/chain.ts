import { type Clock, systemClock } from "../backoff";
import type { Database } from "../db";
import type { CallLedger } from "../embed/types";
import { emit } from "../events";
import { truncate } from "./input";
import { validateExtraction } from "./schema";
import {
  type ExtractAttempt,
  type ExtractFailureCode,
  type ExtractInput,
  ExtractionFailedError,
  type ExtractionProvider,
  type Extractor,
  type ExtractResult,
  type ExtractSubject,
  type ProviderAnswer,
} from "./types";

/**
 * The extraction chain: the providers in their fallback order, each answer checked before it
 * is trusted. For each provider in turn:
 *
 *   held back by a Retry-After          → skipped (not called)
 *   paid, and its daily budget spent    → budget_exhausted (not called; extract:budget, once a day)
 *   called (its own HTTP retries inside; its breaker open → breaker_open, not called)
 *   the answer malformed or off-schema  → one correction retry with the errors fed back;
 *                                         still invalid → the next provider
 *   rate limited, down, timed out       → the next provider (a Retry-After holds it back)
 *   bad_input                           → stop: no provider would do better (permanent)
 *   valid                               → the result
 *
 * Every attempt, the ones not called included (cost 0), is one ledger row with the item it was
 * for; all failed → ExtractionFailedError with every attempt's raw answer and errors. Only a
 * value validateExtraction returned leaves the chain.
 */
export interface BudgetOptions {
  /** USD a day per provider name (a paid provider without one has no budget). */
  dailyUsd: Readonly<Record<string, number>>;
  /** Where today's spend is read from (provider_calls); without it, this process's own spend. */
  db?: Pick<Database, "prisma">;
  /** How often the database is read at most (default 5 s); this process's spend adds between. */
  refreshMs?: number;
}

export interface ExtractorOptions {
  providers: readonly ExtractionProvider[];
  /** Where every attempt is recorded (the cost ledger). */
  ledger?: CallLedger & { flush?: () => Promise<void> };
  budget?: BudgetOptions;
  clock?: Pick<Clock, "now">;
}

/** Codes that come back with a second chance: the correction retry. */
const CORRECTABLE: readonly ExtractFailureCode[] = ["malformed", "schema_violation"];

export function chainId(providers: readonly ExtractionProvider[]): string {
  return providers.map((p) => `${p.name}:${p.model}/${p.promptVersion}`).join(">");
}

export function createExtractor(options: ExtractorOptions): Extractor {
  if (options.providers.length === 0) throw new Error("an extractor needs at least one provider");
  const clock = options.clock ?? systemClock;
  const heldUntil = new Map<string, number>();
  const budget = options.budget ? new DailyBudget(options.budget, clock, options.ledger) : null;
  const providers = [...options.providers];

  async function extract(
    input: ExtractInput,
    call: { signal?: AbortSignal; subject?: ExtractSubject } = {},
  ): Promise<ExtractResult> {
    const attempts: ExtractAttempt[] = [];
    const { signal, subject } = call;

    const note = (
      provider: ExtractionProvider,
      answer: ProviderAnswer | null,
      fields: {
        outcome: ExtractAttempt["outcome"];
        error?: string | null;
        correction?: boolean;
        n: number;
      },
    ): ExtractAttempt => {
      const attempt: ExtractAttempt = {
        provider: provider.name,
        model: provider.model,
        promptVersion: provider.promptVersion,
        ok: fields.outcome === "ok",
        outcome: fields.outcome,
        error: fields.error ?? null,
        correction: fields.correction ?? false,
        rawText: fields.outcome === "ok" || !answer?.rawText ? null : truncate(answer.rawText),
        tokensIn: answer?.tokensIn ?? 0,
        tokensOut: answer?.tokensOut ?? 0,
        costUsd: answer?.costUsd ?? 0,
        latencyMs: answer?.latencyMs ?? 0,
        status: answer?.status ?? null,
      };
      attempts.push(attempt);
      if (provider.paid && attempt.costUsd > 0) budget?.spend(provider.name, attempt.costUsd);
      options.ledger?.record({
        purpose: "extract",
        provider: attempt.provider,
        model: attempt.model,
        ok: attempt.ok,
        status: attempt.status,
        error: attempt.error,
        items: 1,
        inputTokens: attempt.tokensIn,
        outputTokens: attempt.tokensOut,
        costUsd: attempt.costUsd,
        latencyMs: attempt.latencyMs,
        attempt: fields.n,
        promptVersion: attempt.promptVersion,
        outcome: attempt.outcome,
        correction: attempt.correction,
        entryKey: subject?.entryKey ?? null,
        itemVersion: subject?.itemVersion ?? null,
        sourceId: subject?.sourceId ?? null,
      });
      return attempt;
    };

    const done = (result: ExtractResult | null) => {
      emit("extract:done", {
        provider: result?.provider ?? null,
        model: result?.model ?? null,
        ok: result !== null,
        fellOver: result?.fellOver ?? false,
        attempts: attempts.length,
        costUsd: attempts.reduce((n, a) => n + a.costUsd, 0),
      });
    };

    for (const [index, provider] of providers.entries()) {
      signal?.throwIfAborted();
      let n = 0;
      const held = heldUntil.get(provider.name) ?? 0;
      if (held > clock.now()) {
        note(provider, null, {
          outcome: "skipped",
          error: `held back by a Retry-After until ${new Date(held).toISOString()}; not called`,
          n: ++n,
        });
        continue;
      }
      if (budget && provider.paid && (await budget.exhausted(provider.name))) {
        note(provider, null, {
          outcome: "budget_exhausted",
          error: budget.describe(provider.name),
          n: ++n,
        });
        continue;
      }

      let correction: { previousRaw: string; errors: string[] } | undefined;
      for (let pass = 0; pass < 2; pass++) {
        if (pass === 1 && budget && provider.paid && (await budget.exhausted(provider.name))) {
          note(provider, null, {
            outcome: "budget_exhausted",
            error: `${budget.describe(provider.name)}; no correction retry`,
            correction: true,
            n: ++n,
          });
          break;
        }
        const isCorrection = pass === 1;
        const answer = await callProvider(provider, input, {
          ...(signal ? { signal } : {}),
          ...(correction ? { correction } : {}),
          onRetried: (failed) =>
            note(provider, failed, {
              outcome: failed.code,
              error: failed.message,
              correction: isCorrection,
              n: ++n,
            }),
        });
        if (!answer.ok) {
          note(provider, answer, {
            outcome: answer.code,
            error: answer.message,
            correction: isCorrection,
            n: ++n,
          });
          if (answer.retryAfterMs !== undefined && answer.retryAfterMs > 0) {
            heldUntil.set(provider.name, clock.now() + answer.retryAfterMs);
          }
          if (answer.code === "bad_input") {
            done(null);
            throw new ExtractionFailedError(
              `${provider.name} refused the input: ${answer.message}`,
              attempts,
              true,
            );
          }
          if (!isCorrection && CORRECTABLE.includes(answer.code)) {
            correction = { previousRaw: answer.rawText ?? "", errors: [answer.message] };
            continue;
          }
          break;
        }
        const checked = validateExtraction(answer.candidate);
        if (!checked.ok) {
          note(provider, answer, {
            outcome: "schema_violation",
            error: checked.errors.join("; "),
            correction: isCorrection,
            n: ++n,
          });
          correction = { previousRaw: answer.rawText, errors: checked.errors };
          continue;
        }
        note(provider, answer, { outcome: "ok", correction: isCorrection, n: ++n });
        const result: ExtractResult = {
          extraction: checked.value,
          provider: provider.name,
          model: provider.model,
          promptVersion: provider.promptVersion,
          fellOver: index > 0,
          attempts,
          tokensIn: attempts.reduce((s, a) => s + a.tokensIn, 0),
          tokensOut: attempts.reduce((s, a) => s + a.tokensOut, 0),
          costUsd: attempts.reduce((s, a) => s + a.costUsd, 0),
        };
        done(result);
        return result;
      }
    }
    done(null);
    const why = attempts
      .filter((a, i, all) => all.findLastIndex((b) => b.provider === a.provider) === i)
      .map((a) => `${a.provider}: ${a.outcome}${a.error ? ` (${a.error.slice(0, 200)})` : ""}`)
      .join("; ");
    throw new ExtractionFailedError(`every provider failed: ${why}`, attempts);
  }

  return {
    id: chainId(providers),
    providers,
    extract,
    async close() {
      await Promise.all(providers.map((p) => p.close?.()));
    },
  };
}

/** A provider's answer, a throw (which the contract forbids) turned into provider_error. */
async function callProvider(
  provider: ExtractionProvider,
  input: ExtractInput,
  options: Parameters<ExtractionProvider["call"]>[1],
): Promise<ProviderAnswer> {
  try {
    return await provider.call(input, options);
  } catch (err) {
    if (options?.signal?.aborted) throw options.signal.reason;
    return {
      ok: false,
      code: "provider_error",
      message: `${provider.name} threw: ${(err as Error)?.message ?? String(err)}`,
      tokensIn: 0,
      tokensOut: 0,
      costUsd: 0,
      latencyMs: 0,
      status: null,
    };
  }
}

/** Midnight UTC of the day `at` is in. */
export function utcDayStart(at: number): number {
  const d = new Date(at);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

/**
 * USD a provider's extraction calls cost since midnight UTC (provider_calls, purpose extract):
 * the budget's spend, and the Costs page's.
 */
export async function dailySpend(
  db: Pick<Database, "prisma">,
  provider: string,
  now: number = Date.now(),
): Promise<number> {
  const since = new Date(utcDayStart(now));
  const rows = await db.prisma.$queryRaw<{ spent: number | null }[]>`
    SELECT coalesce(sum(cost_usd), 0)::float8 AS spent
    FROM provider_calls
    WHERE purpose = 'extract' AND provider = ${provider} AND at >= ${since}`;
  return Number(rows[0]?.spent ?? 0);
}

/**
 * Today's spend per provider against its budget: the database's figure, read at most every
 * `refreshMs` (5 s: a budget of a few cents is passed by at most 5 s of calls, ~$0.001 at 10
 * items/s of gpt-4o-mini), plus this process's own spend since that read. The ledger is flushed
 * before each read, so this process's rows are in the figure once, not twice or never.
 */
class DailyBudget {
  private readonly state = new Map<
    string,
    { day: number; base: number; readAt: number; local: number }
  >();
  private readonly told = new Map<string, number>();

  constructor(
    private readonly options: BudgetOptions,
    private readonly clock: Pick<Clock, "now">,
    private readonly ledger?: { flush?: () => Promise<void> },
  ) {}

  limit(provider: string): number | undefined {
    return this.options.dailyUsd[provider];
  }

  async spent(provider: string): Promise<number> {
    const now = this.clock.now();
    const day = utcDayStart(now);
    let s = this.state.get(provider);
    if (!s || s.day !== day) {
      s = { day, base: 0, readAt: Number.NEGATIVE_INFINITY, local: 0 };
      this.state.set(provider, s);
    }
    const { db } = this.options;
    if (db && now - s.readAt >= (this.options.refreshMs ?? 5_000)) {
      try {
        await this.ledger?.flush?.();
        s.base = await dailySpend(db, provider, now);
        s.local = 0;
        s.readAt = now;
      } catch {
        // The database unreadable: the last figure and this process's spend since still count.
      }
    }
    return s.base + s.local;
  }

  spend(provider: string, usd: number): void {
    const day = utcDayStart(this.clock.now());
    const s = this.state.get(provider);
    if (s && s.day === day) s.local += usd;
    else this.state.set(provider, { day, base: 0, readAt: Number.NEGATIVE_INFINITY, local: usd });
  }

  async exhausted(provider: string): Promise<boolean> {
    const limit = this.limit(provider);
    if (limit === undefined) return false;
    const spent = await this.spent(provider);
    if (spent < limit) return false;
    const day = utcDayStart(this.clock.now());
    if (this.told.get(provider) !== day) {
      this.told.set(provider, day);
      emit("extract:budget", { provider, spentUsd: spent, budgetUsd: limit });
    }
    return true;
  }

  describe(provider: string): string {
    const s = this.state.get(provider);
    const spent = s ? s.base + s.local : 0;
    return `the daily budget of $${this.limit(provider)} is spent ($${spent.toFixed(4)} today, UTC); not called until midnight UTC`;
  }
}
