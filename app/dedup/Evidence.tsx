import type { Evidence } from "@/lib/dashboard/dedupEvidence";
import own from "./dedup.module.css";

const STAGE_TEXT: Record<string, string> = {
  url: "same story URL (normalised)",
  exact: "same text (normalised)",
  near: "near match (SimHash, then scored)",
  meaning: "same meaning (vectors)",
  review: "confirmed by an operator",
};

/** What settled a link, said as a reader would. */
export const stageText = (stage: string) => STAGE_TEXT[stage] ?? stage;

/**
 * A score against the threshold it was held to: url and exact links are 1 against 1 (an index
 * lookup either matches or not), so only the scored stages get the bar.
 */
export function ScoreVsThreshold({
  stage,
  score,
  threshold,
}: {
  stage: string;
  score: number;
  threshold: number;
}) {
  if (stage === "url" || stage === "exact") {
    return <span className={own.meta}>an index lookup: the keys are equal</span>;
  }
  return (
    <span data-testid="score">
      <span className={own.score}>{score.toFixed(2)}</span>{" "}
      <span className={own.meta}>
        {score >= threshold ? "≥" : "<"} threshold {threshold.toFixed(2)}
      </span>
      <meter
        className={own.bar}
        min={0}
        max={1}
        low={threshold}
        optimum={1}
        value={Math.max(0, Math.min(1, score))}
        aria-label={`score ${score.toFixed(2)} against threshold ${threshold.toFixed(2)}`}
      />
    </span>
  );
}

function Chips({ words, kind, label }: { words: string[]; kind: string; label: string }) {
  if (words.length === 0) return <p className={own.meta}>{label}: none</p>;
  return (
    <>
      <p className={own.meta}>{label}</p>
      <ul className={`${own.chips} ${kind}`} aria-label={label}>
        {words.map((w) => (
          <li key={w}>{w}</li>
        ))}
      </ul>
    </>
  );
}

/** The evidence of a link or a pair: shared words and phrases, and what differs on each side. */
export function EvidenceView({
  evidence,
  here = "this item",
  there = "the other",
}: {
  evidence: Evidence | null;
  here?: string;
  there?: string;
}) {
  if (!evidence) return <p className={own.meta}>No evidence recorded.</p>;
  const words = evidence.shared.length + evidence.onlyHere.length + evidence.onlyThere.length;
  if (words === 0 && (evidence.urlKey || evidence.contentKey)) {
    return (
      <p className={own.meta} data-testid="evidence">
        {evidence.urlKey
          ? `Same normalised URL: ${evidence.urlKey}`
          : `Same text fingerprint: ${evidence.contentKey}`}
      </p>
    );
  }
  return (
    <div data-testid="evidence">
      {evidence.distance !== null ? (
        <p className={own.meta}>SimHash distance: {evidence.distance} of 64 bits</p>
      ) : null}
      <Chips words={evidence.shared} kind={own.shared ?? ""} label="Shared words" />
      {evidence.phrases.length > 0 ? (
        <Chips words={evidence.phrases} kind={own.phrases ?? ""} label="Shared phrases" />
      ) : null}
      <Chips words={evidence.onlyHere} kind={own.only ?? ""} label={`Only in ${here}`} />
      <Chips words={evidence.onlyThere} kind={own.only ?? ""} label={`Only in ${there}`} />
    </div>
  );
}
