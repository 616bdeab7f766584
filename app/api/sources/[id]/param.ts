import { text } from "@/lib/validation";

/**
 * A source id in the path. Not the sources file's pattern: a source added from the dashboard
 * may be named otherwise, and an unknown id is a 404. Only what PostgreSQL cannot compare (a
 * NUL, a lone surrogate) or what no source id is (empty, over 200 characters) is a 400; it is
 * not trimmed, so " s" never acts on "s".
 */
export const SourceIdParam = text(200, { min: 1, trim: false });
