// The dead-letter admin API: what the dashboard and the CLI (cli/commands/dlq.ts) call.
export { archiveExpiredDeadLetters, DEAD_LETTER_TTL_DAYS } from "./archiveExpired";
export {
  AUDIT_ACTIONS,
  type AuditEntry,
  type DeadLetterAuditAction,
  listDeadLetterAudit,
} from "./audit";
export {
  type DiscardOptions,
  type DiscardResult,
  discardDeadLetter,
  discardDeadLetters,
} from "./discard";
export {
  type DeadLetterFilter,
  type DeadLetterFilterInput,
  deadLetterFilterSchema,
  InvalidDeadLetterFilterError,
  parseDeadLetterFilter,
} from "./filter";
export {
  type DeadLetter,
  type DeadLetterDetail,
  type DeadLetterPage,
  type FailureRecord,
  getDeadLetter,
  type LeaseEventRecord,
  type ListOptions,
  listDeadLetters,
} from "./list";
export {
  DEFAULT_RATE_PER_SECOND,
  REFUSALS,
  type RequeueOptions,
  type RequeueResult,
  requeueDeadLetter,
  requeueDeadLetters,
} from "./requeue";
export { DEFAULT_CAP, MAX_CAP, type Selection, SelectionError } from "./selection";
export {
  type DeadLetterStats,
  type DepthStats,
  deadLetterStats,
  type FingerprintGroup,
} from "./stats";
