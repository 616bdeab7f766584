/**
 * Why an outline of an OPML file is not imported, one stable code each (the CLI's --json and a
 * dashboard page show the code and the message). An `error` is a mistake in the file and makes
 * the import exit 1; a `notice` is what real exports contain on purpose: Feedly and Inoreader
 * file one feed under every folder (tag) it has, and importing the same file twice must be calm.
 */
export const OPML_PROBLEM_SEVERITY = {
  /** Not well-formed XML: nothing in the file is read. */
  malformed_xml: "error",
  /** The DOCTYPE declares entities: refused before parsing, as the feed parser does. */
  entity_declaration: "error",
  /** Well-formed XML, but not an <opml> document with a <body>. */
  not_opml: "error",
  /** Outlines nested deeper than the parser allows (real exports nest 2–4 levels). */
  too_deep: "error",
  /** More feeds than one import adds (the sources file's own limit). */
  too_many: "error",
  /** An outline without xmlUrl that holds no outlines: neither a feed nor a folder. */
  not_a_feed: "error",
  /** xmlUrl is not an absolute URL, is too long, or carries a user name or password. */
  invalid_url: "error",
  /** xmlUrl is a URL, but not http or https (feed://, file://, javascript: …). */
  unsupported_scheme: "error",
  /** xmlUrl names this machine, a private or link-local address, or a metadata service. */
  blocked_ssrf: "error",
  /** The folders it is nested in make a path too long to store (over 200 characters). */
  invalid_folder: "error",
  /** The same feed earlier in the file (often the same feed in a second folder). */
  duplicate_in_file: "notice",
  /** The feed is already a source (from the sources file or added in the dashboard). */
  already_a_source: "notice",
} as const;

export type OpmlProblemCode = keyof typeof OPML_PROBLEM_SEVERITY;
export type OpmlSeverity = (typeof OPML_PROBLEM_SEVERITY)[OpmlProblemCode];

export interface OpmlProblem {
  /** 1-based line of the OPML where the outline starts (or where reading failed). */
  line: number;
  code: OpmlProblemCode;
  severity: OpmlSeverity;
  message: string;
  /** The outline's xmlUrl as written, when it has one. */
  url?: string;
  /** already_a_source: the source it already is. */
  existingId?: string;
}

export function problem(
  line: number,
  code: OpmlProblemCode,
  message: string,
  extra: Pick<OpmlProblem, "url" | "existingId"> = {},
): OpmlProblem {
  return { line, code, severity: OPML_PROBLEM_SEVERITY[code], message, ...extra };
}

export function byLine(a: OpmlProblem, b: OpmlProblem): number {
  return a.line - b.line;
}
