/**
 * The audit action an OPML import records, in a module of its own (no database imports) so the
 * Audit page's list of known actions (lib/dashboard/audit.ts) can include it cheaply.
 */
export const OPML_AUDIT_ACTIONS = { import: "sources.import_opml" } as const;
