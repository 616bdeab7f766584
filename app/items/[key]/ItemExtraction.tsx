import Link from "next/link";
import s from "@/components/dashboard.module.css";
import { usd, when } from "@/lib/dashboard/format";
import type { ItemExtraction as Extraction } from "@/lib/dashboard/itemExtraction";
import own from "./extraction.module.css";

const LANGUAGES: Record<string, string> = { bn: "Bangla", en: "English", other: "other" };

/**
 * The item's extraction with who made it and what it cost; a duplicate shows its canonical's
 * (never extracted itself: nothing is paid twice). Then the item's own calls in the ledger.
 */
export function ItemExtraction({ e, isDuplicate }: { e: Extraction; isDuplicate: boolean }) {
  const x = e.extraction;
  return (
    <section className={s.card} aria-label="Extraction" data-testid="item-extraction">
      <h2>Extraction</h2>
      {isDuplicate && e.canonicalKey ? (
        <p data-testid="extraction-of-canonical">
          A duplicate is never sent to a provider: it takes the extraction of its cluster&apos;s
          canonical,{" "}
          <Link href={`/items/${e.canonicalKey}`}>
            {x?.title ?? `${e.canonicalKey.slice(0, 12)}…`}
          </Link>
          {x ? ", shown here." : ", which has none yet."}
        </p>
      ) : null}
      {x ? (
        <dl>
          <dt>Language</dt>
          <dd>{LANGUAGES[x.language] ?? x.language}</dd>
          <dt>Category</dt>
          <dd>{x.category ?? "none fits"}</dd>
          <dt>Entities</dt>
          <dd className={own.entities}>
            {x.entities.length === 0
              ? "—"
              : x.entities.map((en, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: the list as stored, in its order
                  <span key={i} className="badge authoritative" data-entity-type={en.type}>
                    {en.text} · {en.type}
                  </span>
                ))}
          </dd>
          <dt>Summary</dt>
          <dd>{x.summary ?? "— (the item had one)"}</dd>
          <dt>Made by</dt>
          <dd>
            {x.provider} · <code>{x.model}</code> · prompt <code>{x.promptVersion}</code>
            {x.fellOver ? (
              <span className="badge fallback"> fell over from the first provider</span>
            ) : null}
          </dd>
          <dt>For</dt>
          <dd>
            v{x.itemVersion}
            {x.current ? "" : " (the item has changed since: it is extracted again shortly)"},{" "}
            {when(x.extractedAt)}
          </dd>
          <dt>Cost</dt>
          <dd data-testid="extraction-cost">
            {usd(x.costUsd)} · {x.calls} call{x.calls === 1 ? "" : "s"} ·{" "}
            {x.tokensIn.toLocaleString("en-GB")} tokens in, {x.tokensOut.toLocaleString("en-GB")}{" "}
            out
          </dd>
          <dt>Chain</dt>
          <dd className={s.mono}>{x.extractor}</dd>
        </dl>
      ) : !isDuplicate ? (
        <p className={s.muted}>
          Not extracted yet: the extract stage takes every item dedup keeps, after dedup has decided
          it.
        </p>
      ) : null}
      <h3>Calls for this item</h3>
      {e.ledger.calls === 0 ? (
        <p className={s.muted}>
          {isDuplicate ? "None: a duplicate costs nothing." : "None in the cost ledger."}
        </p>
      ) : (
        <>
          <p className={s.muted}>
            {e.ledger.calls} call{e.ledger.calls === 1 ? "" : "s"} in all, {usd(e.ledger.costUsd)}
            {e.ledger.calls > e.recentCalls.length ? `; the newest ${e.recentCalls.length}:` : ":"}
          </p>
          <div className={own.scroll}>
            <table className={s.table} aria-label="Calls for this item">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Provider · model</th>
                  <th>Outcome</th>
                  <th className={s.num}>Tokens in / out</th>
                  <th className={s.num}>Cost</th>
                  <th className={s.num}>Latency</th>
                </tr>
              </thead>
              <tbody>
                {e.recentCalls.map((c, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: ledger rows in a fixed order
                  <tr key={i} data-outcome={c.outcome}>
                    <td className={s.nowrap}>{when(c.at)}</td>
                    <td>
                      {c.provider} · <code>{c.model}</code>
                      {c.itemVersion !== null ? (
                        <span className={s.muted}> · v{c.itemVersion}</span>
                      ) : null}
                    </td>
                    <td>
                      <span className={`badge ${c.outcome === "ok" ? "live" : "retracted"}`}>
                        {c.outcome}
                      </span>
                      {c.correction ? <span className={s.muted}> correction retry</span> : null}
                      {c.error && c.outcome !== "ok" ? (
                        <div className={s.muted}>{c.error}</div>
                      ) : null}
                    </td>
                    <td className={s.num}>
                      {c.tokensIn.toLocaleString("en-GB")} / {c.tokensOut.toLocaleString("en-GB")}
                    </td>
                    <td className={s.num}>{usd(c.costUsd)}</td>
                    <td className={s.num}>{Math.round(c.latencyMs)} ms</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
