import ipaddr from "ipaddr.js";
import { z } from "zod";

/** A comma-separated list: entries trimmed, empty ones dropped. */
const list = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? "")
      .split(",")
      .map((e) => e.trim())
      .filter(Boolean),
  );

function isAddressOrCidr(entry: string): boolean {
  try {
    if (entry.includes("/")) ipaddr.parseCIDR(entry);
    else ipaddr.parse(entry);
    return true;
  } catch {
    return false;
  }
}

/** An http(s) base URL a callback path can be appended to. */
function isPublicBaseUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (
      (u.protocol === "http:" || u.protocol === "https:") &&
      !u.username &&
      !u.password &&
      !u.search &&
      !u.hash &&
      !value.includes("?") &&
      !value.includes("#")
    );
  } catch {
    return false;
  }
}

// Every setting wirewatch reads, in one place. Nothing else reads process.env.
// A bad value fails at start with the setting's name and what was expected.
/** USD per million tokens, per model: `WIREWATCH_LLM_PRICES`. */
export const priceTableSchema = z.record(
  z.string().min(1),
  z.strictObject({
    input: z.number().min(0).max(10_000),
    output: z.number().min(0).max(10_000),
  }),
);

const schema = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  WIREWATCH_DATA_DIR: z.string().min(1).default("./.data"),
  /**
   * The sources file (workers/sources/sourcesFile.ts). Unset: ./wirewatch.config.json, and
   * none configured when it is missing; a path: that file, which must exist; "none": no file.
   */
  WIREWATCH_CONFIG: z.string().min(1).optional(),
  /**
   * The newsroom simulator. auto: started inside the app on the embedded default when no source
   * is configured, so a newcomer sees live data; on: always; off: never.
   */
  WIREWATCH_SIMULATOR: z.enum(["auto", "on", "off"]).default("auto"),
  /** The port the app listens on (Next sets it; `next start -p` or PORT). */
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  /**
   * Where this app is reachable by the inline simulator's story API, which delivers its signed
   * webhooks to <WIREWATCH_URL>/api/webhooks/stories. Default http://127.0.0.1:<PORT>.
   */
  WIREWATCH_URL: z.string().url().optional(),
  /**
   * WebSub (workers/websub): the public address hubs reach this app at. Set, feeds that advertise
   * a hub are subscribed with callbacks at <it>/api/websub/<token>, and polled 4× less often
   * while the subscription is live; unset (the default), nothing is subscribed. It must be
   * reachable from the hub: a loopback address only works with a hub on this machine.
   */
  WIREWATCH_WEBSUB_CALLBACK_URL: z
    .string()
    .refine(isPublicBaseUrl, {
      message:
        "must be the app's address as hubs reach it: an http:// or https:// URL without credentials, query or fragment (e.g. https://news.example.com)",
    })
    .optional(),
  /** The lease asked of hubs (the hub may grant another); renewed at 80 % of what it granted. */
  WIREWATCH_WEBSUB_LEASE_SECONDS: z.coerce
    .number()
    .int()
    .min(300)
    .max(30 * 86_400)
    .default(7 * 86_400),
  /**
   * The Chromium that renders page sources marked "render": "browser" (workers/fetcher/browser.ts).
   * Unset: Debian's /usr/bin/chromium, else chromium-browser or google-chrome where installed.
   */
  WIREWATCH_CHROMIUM: z
    .string()
    .refine((p) => p.startsWith("/"), { message: "must be an absolute path to a Chromium binary" })
    .optional(),
  /**
   * Days of fetch history kept row by row (each attempt; each look at a page); older attempts are
   * folded into one row per source, day and code (workers/fetcher/history.ts). At least 7: the
   * source page shows up to a week of attempts.
   */
  WIREWATCH_FETCH_HISTORY_DAYS: z.coerce.number().int().min(7).max(3_650).default(14),
  /** Pages rendered at once, each in a fresh browser context; a render takes most of a core. */
  WIREWATCH_BROWSER_CONTEXTS: z.coerce.number().int().min(1).max(16).default(2),
  /**
   * The Host names (with any port) the app answers; any other is refused with 421, so a page
   * that rebinds its own name to this machine's address cannot read it (docs/decisions/013).
   * Always allowed besides: localhost, 127.0.0.1, [::1] and the host of WIREWATCH_URL.
   */
  WIREWATCH_ALLOWED_HOSTS: list.pipe(
    z.array(
      z
        .string()
        .regex(/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/i, "must be host names without scheme or port"),
    ),
  ),
  /**
   * Addresses or CIDRs of the reverse proxies whose X-Forwarded-For is believed; none by default,
   * so the client is the socket's peer address (docs/decisions/013).
   */
  WIREWATCH_TRUSTED_PROXIES: list.pipe(
    z.array(z.string().refine(isAddressOrCidr, "must be IP addresses or CIDRs (10.0.0.0/8)")),
  ),
  /** Where the simulator listens (inline and `npm run simulator`); 0 picks a free port. */
  SIMULATOR_PORT: z.coerce.number().int().min(0).max(65_535).default(4100),
  /**
   * Where ingestion runs. auto: inside the app on the embedded default (one process owns PGlite),
   * in separate `npm run workers` processes on PostgreSQL; inline: always in the app; off: never.
   */
  WIREWATCH_WORKERS: z.enum(["auto", "inline", "off"]).default("auto"),
  /**
   * What an ingestion process runs: all of it, or `collect` (the frontier, polling, streams, the
   * story copy, the writer) or `process` (the line after the store and the read model's builder),
   * so polling and processing scale apart (docs/capacity.md).
   */
  WIREWATCH_WORKER_ROLE: z.enum(["all", "collect", "process"]).default("all"),
  /**
   * Polls one process runs at once. A poll mostly waits (on the network, on a host's budget, on
   * the writer), so a process polling thousands of sources needs more than the default
   * (docs/capacity.md).
   */
  WIREWATCH_FETCH_CONCURRENCY: z.coerce.number().int().min(1).max(512).default(8),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /**
   * The admin's password for the dashboard's actions (requeue, repair, pause…). Unset: on the
   * embedded default admin actions are allowed from loopback only; on PostgreSQL, not at all.
   */
  ADMIN_PASSWORD: z.string().min(8, "must be at least 8 characters").optional(),
  /** open: read-only dashboard pages and their APIs need no login; admin: they do too. */
  DASHBOARD_READ: z.enum(["open", "admin"]).default("open"),
  /** When set, GET /api/metrics requires `Authorization: Bearer <token>`. */
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /**
   * The commit this build was made from, for wirewatch_build_info (lib/metrics/buildInfo.ts).
   * Set it where the build has no .git (a container image); unset, the checkout's .git is read
   * once at start, and "unknown" when there is none.
   */
  WIREWATCH_COMMIT: z
    .string()
    .regex(/^[0-9a-f]{7,40}$/i, "must be a git commit hash (7 to 40 hex digits)")
    .optional(),
  /** Overview turns amber / red at these (dead letters; queue lag p99 in seconds; error share). */
  ALERT_DLQ_AMBER: z.coerce.number().int().min(1).default(1),
  ALERT_DLQ_RED: z.coerce.number().int().min(1).default(100),
  ALERT_LAG_P99_AMBER_SECONDS: z.coerce.number().positive().default(120),
  ALERT_LAG_P99_RED_SECONDS: z.coerce.number().positive().default(900),
  ALERT_ERROR_RATE_AMBER: z.coerce.number().min(0).max(1).default(0.05),
  ALERT_ERROR_RATE_RED: z.coerce.number().min(0).max(1).default(0.25),
  /**
   * Entries read from one feed document at most; the rest are counted on the source and in a
   * metric, not read (docs/decisions/011). Real feeds carry 10–500; 2,000 leaves room for big
   * archives while a runaway 50,000-entry document costs a 25th of its parse and write.
   */
  FEED_MAX_ENTRIES: z.coerce.number().int().min(1).max(1_000_000).default(2_000),
  /**
   * Fault injection for end-to-end tests (workers/chaos/chaos.ts, POST /api/chaos): on lets an admin make
   * a stage fail for a source; off (the default) hides the API and nothing can be set.
   */
  WIREWATCH_CHAOS: z.enum(["off", "on"]).default("off"),
  /**
   * The embedding model (lib/embed): "shipped" (USE-lite, English, in the box), "lexical" (hashed
   * character 3-grams, never presented as meaning), "onnx:<directory>" (a sentence-transformer in
   * ONNX form the operator put there: the path for Bangla + English) or "http:<model name>" (an
   * OpenAI-compatible server at WIREWATCH_EMBEDDING_URL). The printed ids
   * ("shipped:use-lite@0.2.0") are accepted too.
   */
  WIREWATCH_EMBEDDING_MODEL: z
    .string()
    .regex(
      /^(?:(?:shipped|lexical)(?::.+)?|(?:onnx|http):.+)$/,
      'must be "shipped", "lexical", "onnx:<directory>" or "http:<model name>"',
    )
    .default("shipped"),
  /** The OpenAI-compatible server's API base for http models, e.g. http://127.0.0.1:11434/v1. */
  WIREWATCH_EMBEDDING_URL: z
    .string()
    .regex(/^https?:\/\/[^\s/]+/, "must be an http:// or https:// URL (the API base, e.g. …/v1)")
    .optional(),
  /** Sent as `Authorization: Bearer <key>` to that server. */
  WIREWATCH_EMBEDDING_API_KEY: z.string().optional(),
  /** The http model's dimensions; an answer of any other length is refused. */
  WIREWATCH_EMBEDDING_DIMS: z.coerce.number().int().min(1).max(16_384).optional(),
  /** USD per million input tokens of the http model, for the cost ledger (0: free or local). */
  WIREWATCH_EMBEDDING_PRICE_PER_MTOK: z.coerce.number().min(0).max(1_000).default(0),
  /**
   * What answers when the http model is rate limited or down: "shipped" (the default),
   * "lexical", or "none" (the call fails instead). The other models have no fallback.
   */
  WIREWATCH_EMBEDDING_FALLBACK: z.enum(["shipped", "lexical", "none"]).default("shipped"),
  /**
   * The model search ranks by (an id as printed by `cli embed`, or its prefix: "shipped"), when
   * its backfill is complete; unset, or not complete yet: the newest complete model.
   */
  WIREWATCH_SEARCH_MODEL: z.string().min(1).optional(),
  /**
   * Stage 4's thresholds for the configured model, from `npm run -s bench -- meaning --model <id>
   * --write-calibration FILE` (lib/meaning): an operator's model gives stage-4 verdicts only once
   * measured. Unset: the calibration wirewatch ships for the model, if any.
   */
  WIREWATCH_MEANING_CALIBRATION: z.string().min(1).optional(),
  /** Requests per minute at most to the http model's server (unset: as fast as it answers). */
  WIREWATCH_EMBEDDING_RPM: z.coerce.number().positive().max(1_000_000).optional(),
  /**
   * The extraction providers in fallback order (lib/extract), comma-separated: "local" (the
   * deterministic one in the box, free) and "llm" (an OpenAI-compatible chat server at
   * WIREWATCH_EXTRACT_LLM_URL). Unset: "llm,local" when an LLM URL is set (or the built-in
   * simulator serves one), else "local".
   */
  WIREWATCH_EXTRACT_PROVIDERS: z
    .string()
    .regex(/^(?:local|llm)(?:\s*,\s*(?:local|llm))*$/, 'must be a comma list of "local" and "llm"')
    .refine((v) => new Set(v.split(",").map((p) => p.trim())).size === v.split(",").length, {
      message: "names a provider twice",
    })
    .optional(),
  /** The OpenAI-compatible chat server's API base, e.g. https://api.openai.com/v1. */
  WIREWATCH_EXTRACT_LLM_URL: z
    .string()
    .regex(/^https?:\/\/[^\s/]+/, "must be an http:// or https:// URL (the API base, e.g. …/v1)")
    .optional(),
  /** The chat model asked for extraction (its price comes from the price table). */
  WIREWATCH_EXTRACT_LLM_MODEL: z.string().min(1).max(200).default("gpt-4o-mini"),
  /** Sent as `Authorization: Bearer <key>` to the chat server. */
  WIREWATCH_EXTRACT_LLM_API_KEY: z.string().optional(),
  /** One chat attempt's time limit, body included. */
  WIREWATCH_EXTRACT_LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** Requests per minute at most to the chat server (unset: as fast as it answers). */
  WIREWATCH_EXTRACT_LLM_RPM: z.coerce.number().positive().max(1_000_000).optional(),
  /**
   * USD the llm provider may spend per UTC day; once spent it is skipped until midnight and the
   * providers after it answer (unset: no budget).
   */
  WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD: z.coerce.number().min(0).max(1_000_000).optional(),
  /**
   * The tickers the local extraction provider names as instruments when they stand as words
   * ("GP", "AAPL"), comma-separated; unset: its built-in list (lib/extract/providers/local.ts).
   * $AAPL, "NASDAQ: MSFT" and "DSE: GP" are found whether listed or not.
   */
  WIREWATCH_EXTRACT_TICKERS: z
    .string()
    .regex(
      /^[A-Za-z0-9.&-]{1,15}(?:\s*,\s*[A-Za-z0-9.&-]{1,15})*$/,
      "must be a comma list of tickers",
    )
    .optional(),
  /**
   * The price table, USD per million tokens, as JSON over the built-in one (lib/extract/prices.ts):
   * {"<model>": {"input": 0.15, "output": 0.6}}.
   */
  WIREWATCH_LLM_PRICES: z
    .string()
    .transform((raw, ctx) => {
      try {
        return priceTableSchema.parse(JSON.parse(raw));
      } catch (err) {
        ctx.addIssue({
          code: "custom",
          message: `must be JSON like {"gpt-4o-mini":{"input":0.15,"output":0.6}}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`,
        });
        return z.NEVER;
      }
    })
    .optional(),
  /**
   * Redis for the read model (seed 003: "read model in KV"), e.g. redis://127.0.0.1:6379/0: the
   * payloads live there, shared by every app instance, with a short lock so one instance builds a
   * missing key. Unset: in the process, with the read_payloads table for restarts.
   */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/\S+$/, "must be a redis:// or rediss:// URL")
    .optional(),
  /**
   * Connections the public read path may hold on PostgreSQL (its own small pool, so readers never
   * starve ingestion's pool nor ingestion readers). It reads only read_payloads.
   */
  READ_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(2),
  /** How often the read model is rebuilt at most when stories changed (the build interval). */
  WIREWATCH_READ_MODEL_INTERVAL_MS: z.coerce.number().int().min(250).max(600_000).default(2_000),
  /** Requests per minute one client may make to the public API (/api/news, /news). */
  WIREWATCH_PUBLIC_RATE_LIMIT: z.coerce.number().int().min(1).max(10_000_000).default(1_200),
  /**
   * Ranking (frozen in each model version, workers/readmodel): a story's score halves every this
   * many hours since first seen …
   */
  WIREWATCH_RANK_HALF_LIFE_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 30)
    .default(6),
  /** … is multiplied by 1 + this × log2(outlets covering it) … */
  WIREWATCH_RANK_OUTLET_WEIGHT: z.coerce.number().min(0).max(100).default(0.5),
  /** … and by this when it is breaking. */
  WIREWATCH_RANK_BREAKING_BOOST: z.coerce.number().min(1).max(100).default(2),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
});

export type Config = z.infer<typeof schema>;

// Settings that only make sense together: an http model needs its server and its size (the
// other models have both built in).
const checkedSchema = schema.superRefine((c, ctx) => {
  // An llm provider needs a chat server. The built-in simulator serves one when it runs (on, or
  // auto with no sources configured, which only the sources file can tell): checked here when it
  // surely does not run, else when the chain is built (workers/extract/configured.ts).
  const providers = c.WIREWATCH_EXTRACT_PROVIDERS?.split(",").map((p) => p.trim()) ?? [];
  if (
    providers.includes("llm") &&
    !c.WIREWATCH_EXTRACT_LLM_URL &&
    c.WIREWATCH_SIMULATOR === "off"
  ) {
    ctx.addIssue({
      code: "custom",
      path: ["WIREWATCH_EXTRACT_LLM_URL"],
      message: `is required when WIREWATCH_EXTRACT_PROVIDERS names llm (${c.WIREWATCH_EXTRACT_PROVIDERS}) and the simulator is off`,
    });
  }
  if (!c.WIREWATCH_EMBEDDING_MODEL.startsWith("http:")) return;
  for (const key of ["WIREWATCH_EMBEDDING_URL", "WIREWATCH_EMBEDDING_DIMS"] as const) {
    if (c[key] === undefined) {
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: `is required for an http model (WIREWATCH_EMBEDDING_MODEL=${c.WIREWATCH_EMBEDDING_MODEL})`,
      });
    }
  }
});

export class ConfigError extends Error {
  constructor(public readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

/** Parses settings from an environment (process.env by default); empty strings count as unset. */
export function parseConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ""),
  );
  const parsed = checkedSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`),
    );
  }
  return parsed.data;
}

let cached: Config | undefined;

export function config(): Config {
  cached ??= parseConfig();
  return cached;
}
