import { existsSync } from "node:fs";
import pLimit, { type LimitFunction } from "p-limit";
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { config } from "@/lib/config";
import { USER_AGENT } from "./userAgent";

/**
 * Headless Chromium for pages whose headlines appear only after their scripts run (seed 002:
 * HTTP first, a full browser only as the fallback). The browser never touches the network: every
 * request it makes is intercepted and either answered by the caller (through the fetcher's own
 * guarded GET: SSRF check on the resolved address, robots.txt, the per-host rate budget,
 * timeouts, byte caps) or aborted. Chromium is also started with a host resolver that resolves
 * nothing, so a request interception could miss (a prefetch, a WebSocket) cannot dial out either.
 */

/** The system Chromium: Debian's package, else another common install. */
export function chromiumPath(): string | null {
  const candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
  return candidates.find((p): p is string => !!p && existsSync(p)) ?? null;
}

export const CHROMIUM_ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-extensions",
  "--no-first-run",
  "--mute-audio",
  // Defence in depth: every request is fulfilled or aborted by us, so the browser itself never
  // needs a name resolved; any connection it tried on its own would fail here.
  "--host-resolver-rules=MAP * ~NOTFOUND",
];

export interface BrowserPoolOptions {
  executablePath?: string;
  /** Renders at once, each in a context of its own. 2: a renderer takes most of a core. */
  contexts?: number;
  /** The browser is closed after this long without a render (memory back between renders). */
  idleCloseMs?: number;
}

export class BrowserUnavailableError extends Error {
  override readonly name = "BrowserUnavailableError";
}

/**
 * One Chromium for the process, started on first use and closed when idle, with at most
 * `contexts` renders at a time; every render gets a fresh context (no cookies or storage shared
 * between sites or between looks).
 */
export class BrowserPool {
  readonly #limit: LimitFunction;
  readonly #executablePath: string | null;
  readonly #idleCloseMs: number;
  #browser: Promise<Browser> | null = null;
  #idle: NodeJS.Timeout | undefined;
  #active = 0;
  #missing = "no Chromium found: install Debian's chromium or set WIREWATCH_CHROMIUM to its path";

  constructor(options: BrowserPoolOptions = {}) {
    this.#limit = pLimit(Math.max(1, options.contexts ?? 2));
    this.#executablePath = options.executablePath ?? chromiumPath();
    if (options.executablePath && !existsSync(options.executablePath)) {
      // Said at once, not at the first render: a configured path that is wrong is a typo.
      this.#executablePath = null;
      this.#missing = `WIREWATCH_CHROMIUM names ${options.executablePath}, which does not exist`;
    }
    this.#idleCloseMs = options.idleCloseMs ?? 60_000;
  }

  get waiting(): number {
    return this.#limit.pendingCount;
  }

  /** Runs `fn` in a fresh context once a slot is free; the context is closed afterwards. */
  use<T>(fn: (context: BrowserContext) => Promise<T>): Promise<T> {
    return this.#limit(async () => {
      this.#active++;
      clearTimeout(this.#idle);
      let context: BrowserContext | undefined;
      try {
        const browser = await this.#launch();
        context = await browser.newContext({
          userAgent: USER_AGENT,
          serviceWorkers: "block",
          acceptDownloads: false,
          javaScriptEnabled: true,
        });
        return await fn(context);
      } finally {
        await context?.close().catch(() => {});
        this.#active--;
        if (this.#active === 0) {
          this.#idle = setTimeout(() => void this.close(), this.#idleCloseMs);
          this.#idle.unref();
        }
      }
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.#idle);
    const browser = this.#browser;
    this.#browser = null;
    if (browser) await (await browser.catch(() => null))?.close().catch(() => {});
  }

  #launch(): Promise<Browser> {
    if (this.#browser) return this.#browser;
    const executablePath = this.#executablePath;
    if (!executablePath) {
      return Promise.reject(new BrowserUnavailableError(this.#missing));
    }
    const launching = import("playwright-core").then(async ({ chromium }) => {
      const browser = await chromium.launch({
        executablePath,
        args: CHROMIUM_ARGS,
        timeout: 30_000,
      });
      // A crashed browser is started again by the next render, not reused.
      browser.on("disconnected", () => {
        if (this.#browser === launching) this.#browser = null;
      });
      return browser;
    });
    this.#browser = launching;
    launching.catch(() => {
      if (this.#browser === launching) this.#browser = null;
    });
    return launching.catch((err: Error) => {
      throw new BrowserUnavailableError(`Chromium did not start: ${err.message}`, { cause: err });
    });
  }
}

const globalForPool = globalThis as unknown as { wirewatchBrowserPool?: BrowserPool };

/** The process's one pool, as configured (WIREWATCH_CHROMIUM, WIREWATCH_BROWSER_CONTEXTS). */
export function sharedBrowserPool(): BrowserPool {
  if (!globalForPool.wirewatchBrowserPool) {
    const settings = config();
    globalForPool.wirewatchBrowserPool = new BrowserPool({
      contexts: settings.WIREWATCH_BROWSER_CONTEXTS,
      ...(settings.WIREWATCH_CHROMIUM ? { executablePath: settings.WIREWATCH_CHROMIUM } : {}),
    });
  }
  return globalForPool.wirewatchBrowserPool;
}

/** What the browser asked for, as the caller sees it. */
export interface BrowserRequest {
  url: string;
  method: string;
  resourceType: string;
  headers: Record<string, string>;
}

/** The caller's answer: the response to hand the page, or why the request was refused. */
export type BrowserAnswer =
  | { status: number; headers: Record<string, string>; body: Buffer }
  | { refused: string }
  | { failed: string };

export interface RenderInput {
  url: string;
  /** The page's HTML as the fetcher already fetched it: the browser does not fetch it again. */
  body: Buffer;
  contentType?: string;
}

export interface RenderLimits {
  /** The whole render, from opening the page to reading its DOM. */
  deadlineMs: number;
  /** Requests a render may make beyond the page itself. */
  maxRequests: number;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = { deadlineMs: 20_000, maxRequests: 40 };

export interface Rendered {
  /** The DOM after the scripts ran, serialized. */
  html: string;
  /** Requests answered or refused, the page itself included. */
  requests: number;
  /** Requests refused (SSRF, robots.txt, method, the request cap, WebSockets). */
  blocked: number;
  /** The first 20 of them. */
  blockedDetail: { url: string; reason: string }[];
  /** Bytes handed to the browser, the page itself included. */
  bytes: number;
  /** The renderer's main-thread task time (Chromium's TaskDuration metric). */
  cpuMs: number;
  wallMs: number;
  /** The deadline came before the page went quiet: the DOM is read as it was then. */
  timedOut: boolean;
}

/**
 * What a page needs to show its headlines: its document, its scripts and the data they fetch.
 * Images, styles, fonts and media are not fetched (they cost the site and us and add no text).
 */
const FETCHED_TYPES = new Set(["document", "script", "xhr", "fetch"]);

const STRIPPED_HEADERS = new Set([
  "content-encoding",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
]);

/**
 * Opens the page in a fresh context with `body` as its document, answers every further request
 * with `answer`, waits until the network is quiet (or the deadline), and reads the DOM.
 */
export async function renderPage(
  pool: BrowserPool,
  input: RenderInput,
  answer: (request: BrowserRequest) => Promise<BrowserAnswer>,
  limits: Partial<RenderLimits> = {},
): Promise<Rendered> {
  const { deadlineMs, maxRequests } = { ...DEFAULT_RENDER_LIMITS, ...limits };
  // Past the deadline the page's DOM is read as it is; a page whose scripts never yield (the
  // renderer's main thread busy) cannot even be read, so the context is closed under it.
  return pool.use((context) =>
    withinDeadline(context, deadlineMs + READ_GRACE_MS, () =>
      render(context, input, answer, deadlineMs, maxRequests),
    ),
  );
}

/** How long reading the DOM may take after the deadline before the context is closed. */
const READ_GRACE_MS = 5_000;

/** A render cut off at its hard deadline: the renderer was busy all along (its CPU, roughly). */
export class RenderDeadlineError extends Error {
  override readonly name = "RenderDeadlineError";
  constructor(readonly wallMs: number) {
    super(
      `the page did not finish within ${Math.round(wallMs / 1000)} s (its scripts kept the renderer busy); closed`,
    );
  }
}

async function withinDeadline<T>(
  context: BrowserContext,
  ms: number,
  run: () => Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const started = performance.now();
  const running = run();
  // Closing the context rejects whatever the render was waiting on: nobody waits for it then.
  running.catch(() => {});
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new RenderDeadlineError(performance.now() - started));
      void context.close().catch(() => {});
    }, ms);
  });
  try {
    return await Promise.race([running, expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function render(
  context: BrowserContext,
  input: RenderInput,
  answer: (request: BrowserRequest) => Promise<BrowserAnswer>,
  deadlineMs: number,
  maxRequests: number,
): Promise<Rendered> {
  const started = performance.now();
  const blockedDetail: Rendered["blockedDetail"] = [];
  let blocked = 0;
  const block = (url: string, reason: string) => {
    blocked++;
    if (blockedDetail.length < 20) blockedDetail.push({ url: url.slice(0, 500), reason });
  };
  let requests = 1;
  let bytes = input.body.length;
  let pageServed = false;
  let page: Page | undefined;

  await context.routeWebSocket(/.*/, (ws) => {
    block(ws.url(), "WebSockets are not opened");
    void ws.close({ code: 1008, reason: "not opened by the renderer" });
  });
  await context.route("**/*", async (route: Route) => {
    const request = route.request();
    const url = request.url();
    const main = !!page && request.frame() === page.mainFrame();
    if (!pageServed && main && request.isNavigationRequest() && url === input.url) {
      pageServed = true;
      return route
        .fulfill({
          status: 200,
          contentType: input.contentType ?? "text/html; charset=utf-8",
          body: input.body,
        })
        .catch(() => {});
    }
    const type = request.resourceType();
    // Frames other than the page (ads, embeds) and passive resources are left out quietly.
    if (!FETCHED_TYPES.has(type) || (type === "document" && !main)) {
      return route.abort("blockedbyclient").catch(() => {});
    }
    requests++;
    if (request.method() !== "GET") {
      block(url, `${request.method()} is not sent: the renderer only reads`);
      return route.abort("blockedbyclient").catch(() => {});
    }
    if (requests - 1 > maxRequests) {
      block(url, `over the ${maxRequests} requests a render may make`);
      return route.abort("blockedbyclient").catch(() => {});
    }
    const answered = await answer({
      url,
      method: "GET",
      resourceType: type,
      headers: request.headers(),
    }).catch((err: Error) => ({ failed: err.message }));
    if ("refused" in answered) {
      block(url, answered.refused);
      return route.abort("blockedbyclient").catch(() => {});
    }
    if ("failed" in answered) return route.abort("failed").catch(() => {});
    bytes += answered.body.length;
    const headers = Object.fromEntries(
      Object.entries(answered.headers).filter(([k]) => !STRIPPED_HEADERS.has(k.toLowerCase())),
    );
    return route.fulfill({ status: answered.status, headers, body: answered.body }).catch(() => {});
  });

  page = await context.newPage();
  page.on("dialog", (dialog) => void dialog.dismiss().catch(() => {}));
  page.on("popup", (popup) => void popup.close().catch(() => {}));
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");

  const left = () => Math.max(1, deadlineMs - (performance.now() - started));
  let timedOut = false;
  try {
    await page.goto(input.url, { waitUntil: "load", timeout: left() });
    await page.waitForLoadState("networkidle", { timeout: left() });
  } catch (err) {
    if ((err as Error).name !== "TimeoutError") throw err;
    timedOut = true;
  }
  const html = await page.content();
  const metrics = (await cdp.send("Performance.getMetrics")).metrics;
  const task = metrics.find((m) => m.name === "TaskDuration")?.value ?? 0;
  return {
    html,
    requests,
    blocked,
    blockedDetail,
    bytes,
    cpuMs: Math.round(task * 1000),
    wallMs: Math.round(performance.now() - started),
    timedOut,
  };
}
