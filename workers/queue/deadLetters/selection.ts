import {
  type DeadLetterFilter,
  type DeadLetterFilterInput,
  filterJson,
  isEmptyFilter,
  parseDeadLetterFilter,
} from "./filter";

/** The most one requeue or discard call changes, unless told otherwise. */
export const DEFAULT_CAP = 10_000;
export const MAX_CAP = 100_000;

/** What a bulk operation acts on: a filter (ids are a filter too) or, explicitly, everything. */
export interface Selection {
  filter?: DeadLetterFilterInput;
  /** Required to act on every dead letter (an empty filter): no accidental "requeue all". */
  all?: boolean;
  /** At most this many are changed per call (default 10,000); the answer says if more matched. */
  cap?: number;
}

export class SelectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SelectionError";
  }
}

/** Validates a selection: the filter, `all` for an empty one, the cap. */
export function resolveSelection(
  op: string,
  s: Selection,
): { filter: DeadLetterFilter; cap: number; target: Record<string, unknown> } {
  const filter = parseDeadLetterFilter(s.filter ?? {});
  if (isEmptyFilter(filter) && !s.all) {
    throw new SelectionError(
      `${op}: no filter or ids given; pass all: true to ${op} every dead letter`,
    );
  }
  const cap = s.cap ?? DEFAULT_CAP;
  if (!Number.isInteger(cap) || cap < 1 || cap > MAX_CAP) {
    throw new SelectionError(`${op}: cap must be an integer from 1 to ${MAX_CAP}`);
  }
  return { filter, cap, target: { filter: filterJson(filter), all: s.all ?? false } };
}
