import { z } from "zod";
import { SimError } from "./newsroom";

/**
 * Faults an operator (or a test) injects per source, each a failure collectors meet in the wild.
 * Network faults apply to every request of the source; validator faults only to feeds; `stall`
 * and `quiet` only to streams, because that is where the difference between them matters;
 * `stale-reads` only to the story API, whose consumers must survive a read that raced a change.
 * The embeddings endpoint (source id `embeddings`, simulator/embeddings.ts) takes the network
 * faults, `malformed`, `500` and its own `wrong-dims`; the chat endpoint (source id `llm`,
 * simulator/chat.ts) the network faults, `malformed`, `500` and its own `schema`. On these two
 * endpoints a fault may also be given for the next `calls` requests only, after which it clears
 * itself.
 */
export const faultSchema = z.discriminatedUnion("kind", [
  /** Answer after this many (real) milliseconds. */
  z.object({ kind: z.literal("latency"), ms: z.number().int().min(0).max(600_000) }),
  /** 429 Too Many Requests with Retry-After in seconds. */
  z.object({ kind: z.literal("429"), retryAfter: z.number().int().min(0).max(86_400).default(30) }),
  z.object({ kind: z.literal("503") }),
  /** Accept the connection, never answer. */
  z.object({ kind: z.literal("blackhole") }),
  /** Reset the connection (TCP RST), open streams included. */
  z.object({ kind: z.literal("reset") }),
  /**
   * A feed body that is not well-formed XML; an embeddings or chat answer that is not JSON or
   * not the shape.
   */
  z.object({ kind: z.literal("malformed") }),
  /** Feeds without ETag and Last-Modified, so every poll is a full 200. */
  z.object({ kind: z.literal("no-validators") }),
  /** The validators freeze while the body changes: a conditional request gets 304 regardless. */
  z.object({ kind: z.literal("lying-etag") }),
  /** The stream stays connected and sends nothing at all, not even keepalives. */
  z.object({ kind: z.literal("stall") }),
  /** No news: the stream sends keepalives only. */
  z.object({ kind: z.literal("quiet") }),
  /**
   * A scripted page whose script also asks for a loopback address, a cloud metadata address and
   * an intranet name, as a compromised third-party script would.
   */
  z.object({ kind: z.literal("hostile-script") }),
  /** Story API: answer from the state at request start, `ms` later (a read racing a change). */
  z.object({ kind: z.literal("stale-reads"), ms: z.number().int().min(0).max(600_000) }),
  /** Embeddings and chat: 500 Internal Server Error. */
  z.object({ kind: z.literal("500") }),
  /** Embeddings: vectors one dimension longer than the model's. */
  z.object({ kind: z.literal("wrong-dims") }),
  /** Chat: well-formed JSON content that violates the extraction schema. */
  z.object({ kind: z.literal("schema") }),
]);

/** Endpoints only: how many more requests the fault applies to (absent: until cleared). */
const callsSchema = z.object({ calls: z.number().int().min(1).max(1_000_000).optional() });

export type Fault = z.output<typeof faultSchema> & { calls?: number };
export type FaultInput = z.input<typeof faultSchema> & { calls?: number };
export type FaultKind = Fault["kind"];
export const FAULT_KINDS = faultSchema.options.map((o) => o.shape.kind.value);

const FEED_ONLY: FaultKind[] = ["no-validators", "lying-etag"];
/** The source kinds of the OpenAI-compatible endpoints (control.ts names them). */
const ENDPOINTS = ["embeddings", "llm"];
const ENDPOINTS_ONLY: FaultKind[] = ["500"];
const EMBEDDINGS_ONLY: FaultKind[] = ["wrong-dims"];
const CHAT_ONLY: FaultKind[] = ["schema"];
const STREAM_ONLY: FaultKind[] = ["stall", "quiet"];
const STORY_API_ONLY: FaultKind[] = ["stale-reads"];
const PAGE_ONLY: FaultKind[] = ["hostile-script"];

export interface FaultListing {
  sourceId: string;
  faults: Fault[];
}

/** The faults in force, by source id. */
export class FaultTable {
  readonly #bySource = new Map<string, Map<FaultKind, Fault>>();
  /** Validators frozen by a lying-etag fault, set by the first response after it is injected. */
  readonly frozenValidators = new Map<string, { etag: string; lastModified: string }>();
  readonly #listeners = new Set<(sourceId: string, fault: Fault) => void>();

  /** Adds or replaces the fault of that kind; `sourceKind` decides which kinds make sense. */
  inject(sourceId: string, sourceKind: string, input: unknown): Fault {
    const parsed = faultSchema.safeParse(input);
    if (!parsed.success) {
      throw new SimError(
        `bad fault: ${parsed.error.issues.map((i) => `${i.path.join(".") || "fault"} ${i.message}`).join("; ")} (kinds: ${FAULT_KINDS.join(", ")})`,
      );
    }
    const calls = callsSchema.safeParse(input);
    if (!calls.success) throw new SimError(`bad fault: calls ${calls.error.issues[0]?.message}`);
    const fault: Fault = { ...parsed.data, ...calls.data };
    const endpoint = ENDPOINTS.includes(sourceKind);
    if (fault.calls !== undefined && !endpoint) {
      throw new SimError(
        `"calls" applies to the embeddings endpoint and the chat endpoint (llm); ${sourceId} is ${kindName(sourceKind)}`,
      );
    }
    if (ENDPOINTS_ONLY.includes(fault.kind) && !endpoint) {
      throw new SimError(
        `"${fault.kind}" applies to the embeddings endpoint and the chat endpoint (llm); ${sourceId} is ${kindName(sourceKind)}`,
      );
    }
    if (EMBEDDINGS_ONLY.includes(fault.kind) && sourceKind !== "embeddings") {
      throw new SimError(
        `"${fault.kind}" applies to the embeddings endpoint; ${sourceId} is ${kindName(sourceKind)}`,
      );
    }
    if (CHAT_ONLY.includes(fault.kind) && sourceKind !== "llm") {
      throw new SimError(
        `"${fault.kind}" applies to the chat endpoint (llm); ${sourceId} is ${kindName(sourceKind)}`,
      );
    }
    if (fault.kind === "malformed" && sourceKind !== "feed" && !endpoint) {
      throw new SimError(
        `"malformed" applies to feeds, embeddings and the chat endpoint (llm); ${sourceId} is ${kindName(sourceKind)}`,
      );
    }
    if (FEED_ONLY.includes(fault.kind) && sourceKind !== "feed") {
      throw new SimError(
        `"${fault.kind}" applies to feeds; ${sourceId} is ${kindName(sourceKind)}`,
      );
    }
    if (STREAM_ONLY.includes(fault.kind) && sourceKind !== "stream") {
      throw new SimError(
        `"${fault.kind}" applies to streams; ${sourceId} is ${kindName(sourceKind)}`,
      );
    }
    if (PAGE_ONLY.includes(fault.kind) && sourceKind !== "page") {
      throw new SimError(
        `"${fault.kind}" applies to pages; ${sourceId} is ${kindName(sourceKind)}`,
      );
    }
    if (STORY_API_ONLY.includes(fault.kind) && sourceKind !== "story-api") {
      throw new SimError(
        `"${fault.kind}" applies to story APIs; ${sourceId} is ${kindName(sourceKind)}`,
      );
    }
    const faults = this.#bySource.get(sourceId) ?? new Map<FaultKind, Fault>();
    this.#bySource.set(sourceId, faults);
    faults.set(fault.kind, fault);
    if (fault.kind === "lying-etag") this.frozenValidators.delete(sourceId);
    for (const listener of this.#listeners) listener(sourceId, fault);
    return fault;
  }

  /** Clears one kind, or every fault of the source; returns how many were cleared. */
  clear(sourceId: string, kind?: FaultKind): number {
    const faults = this.#bySource.get(sourceId);
    if (!faults) return 0;
    const cleared = kind ? Number(faults.delete(kind)) : faults.size;
    if (!kind) faults.clear();
    if (!faults.has("lying-etag")) this.frozenValidators.delete(sourceId);
    if (faults.size === 0) this.#bySource.delete(sourceId);
    return cleared;
  }

  clearAll(): void {
    this.#bySource.clear();
    this.frozenValidators.clear();
  }

  get<K extends FaultKind>(sourceId: string, kind: K): Extract<Fault, { kind: K }> | undefined {
    return this.#bySource.get(sourceId)?.get(kind) as Extract<Fault, { kind: K }> | undefined;
  }

  /**
   * The fault of that kind, counting one request against it: a fault given for `calls` requests
   * clears itself after the last (the embeddings and chat endpoints' faults).
   */
  take<K extends FaultKind>(sourceId: string, kind: K): Extract<Fault, { kind: K }> | undefined {
    const fault = this.get(sourceId, kind);
    if (fault?.calls === undefined) return fault;
    if (fault.calls <= 1) this.clear(sourceId, kind);
    else this.#bySource.get(sourceId)?.set(kind, { ...fault, calls: fault.calls - 1 });
    return fault;
  }

  has(sourceId: string, kind: FaultKind): boolean {
    return this.#bySource.get(sourceId)?.has(kind) ?? false;
  }

  list(): FaultListing[] {
    return [...this.#bySource]
      .map(([sourceId, faults]) => ({ sourceId, faults: [...faults.values()] }))
      .sort((a, b) => a.sourceId.localeCompare(b.sourceId));
  }

  /** Told about every injection, so open streams can react (a reset drops them at once). */
  onInject(listener: (sourceId: string, fault: Fault) => void): void {
    this.#listeners.add(listener);
  }
}

/** "a feed", "the chat endpoint": what a refusal says the source is. */
function kindName(sourceKind: string): string {
  if (sourceKind === "llm") return "the chat endpoint";
  if (sourceKind === "embeddings") return "the embeddings endpoint";
  return `a ${sourceKind}`;
}
