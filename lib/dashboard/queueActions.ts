/**
 * The Queues page's admin actions as audited (workers/admin/queues.ts writes them), in a module
 * without database imports so the Audit page's list of actions can name them (lib/ never imports
 * workers/, docs/decisions/021).
 */
export const QUEUE_AUDIT_ACTIONS = { pause: "queues.pause", resume: "queues.resume" } as const;
