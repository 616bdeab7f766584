/**
 * Anything that is not a feed we can read: not XML, not a known feed format, or hostile. The
 * fetch stage maps it to the stable code `parse_error` on the source and the dead letter.
 */
export class FeedParseError extends Error {
  readonly code = "parse_error";

  constructor(message: string) {
    super(`parser: ${message}`);
    this.name = "FeedParseError";
  }
}
