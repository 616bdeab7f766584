/**
 * What WebSub records on the Audit page (workers/websub/audit.ts writes them, as the actor
 * "websub"), in a module without database imports so the Audit page's list of actions can name
 * them (lib/ never imports workers/, docs/decisions/021).
 */
export const WEBSUB_AUDIT_ACTIONS = {
  /** A hub verified a new subscription: the feed is pushed from now on. */
  subscribed: "websub.subscribed",
  /** The hub refused the subscription (hub.mode=denied), with its reason. */
  denied: "websub.denied",
  /** The hub refused the request, could not be reached, or never verified it. */
  failed: "websub.failed",
  /** The subscription ended (source removed, paused or off), verified by the hub or given up. */
  unsubscribed: "websub.unsubscribed",
  /** A push refused before anything was written: signature missing or bad, not a feed, too large. */
  pushRefused: "websub.push_refused",
} as const;
