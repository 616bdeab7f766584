"use client";

import { useState } from "react";
import { type OpmlRequest, useOpmlImportMutation } from "./manageHooks";
import styles from "./sources.module.css";

/**
 * OPML in: upload or paste, a dry run first that shows the plan (what would be added, with its
 * folder, and every problem by line), then the import of exactly that file. Out: a download of
 * every feed source. Uses workers/sources/opml through /api/sources/opml.
 */
export function OpmlImport() {
  const [text, setText] = useState("");
  const [file, setFile] = useState<string | undefined>();
  const [allowPrivate, setAllowPrivate] = useState(false);
  const [planned, setPlanned] = useState<OpmlRequest | null>(null);
  const run = useOpmlImportMutation();

  const upload = async (e: React.ChangeEvent<HTMLInputElement>) => {
    const chosen = e.target.files?.[0];
    if (!chosen) return;
    setFile(chosen.name);
    setText(await chosen.text());
    setPlanned(null);
    run.reset();
  };
  const dryRun = (e: React.FormEvent) => {
    e.preventDefault();
    const request = { opml: text, dryRun: true, allowPrivate, file };
    run.mutate(request, { onSuccess: () => setPlanned(request) });
  };
  const plan = run.data?.plan;
  const applied = run.data?.applied;
  // The import is of the very text and options the dry run showed: editing them asks again.
  const stale = !planned || planned.opml !== text || planned.allowPrivate !== allowPrivate;

  return (
    <div className={styles.manage}>
      <p className={styles.sub}>
        <a href="/api/sources/opml" download="wirewatch-sources.opml" className={styles.name}>
          Export every feed as OPML
        </a>{" "}
        (OPML 2.0, readable by Feedly, Inoreader, Miniflux, NewsBlur and FreshRSS).
      </p>
      <form onSubmit={dryRun} className={styles.form} aria-label="Import OPML">
        <label className={styles.wide}>
          OPML file
          <input
            type="file"
            accept=".opml,.xml,text/x-opml,text/xml,application/xml"
            onChange={upload}
          />
        </label>
        <label className={styles.wide}>
          or paste it
          <textarea
            rows={6}
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              setFile(undefined);
            }}
            spellCheck={false}
          />
        </label>
        <label className={styles.check}>
          <input
            type="checkbox"
            checked={allowPrivate}
            onChange={(e) => setAllowPrivate(e.target.checked)}
          />
          Allow private addresses
        </label>
        <button type="submit" className={styles.button} disabled={!text.trim() || run.isPending}>
          Dry run
        </button>
      </form>
      {run.error ? (
        <p className={`${styles.message} ${styles.failed}`} role="alert">
          Refused: {run.error.message}
        </p>
      ) : null}
      {plan ? (
        <section className={styles.panel} aria-label="Import plan" data-testid="opml-plan">
          <h3>
            {applied
              ? `Imported: ${applied.added.length} source(s) added`
              : `Dry run: ${plan.add.length} would be added, ${plan.problems.length} not (${plan.errors} error(s))`}
            {plan.opml.title ? ` · ${plan.opml.title}` : ""}
          </h3>
          {plan.add.length > 0 ? (
            <div className={styles.scroll}>
              <table className="sources">
                <thead>
                  <tr>
                    <th scope="col">Line</th>
                    <th scope="col">{applied ? "Added" : "Would add"}</th>
                    <th scope="col">Folder</th>
                  </tr>
                </thead>
                <tbody>
                  {plan.add.map((s) => (
                    <tr key={s.id}>
                      <td className="num">{s.line}</td>
                      <td>
                        {s.name}
                        <div className={styles.sub}>{s.url}</div>
                      </td>
                      <td>{s.folder.join(" / ") || "–"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          {plan.problems.length > 0 ? (
            <div className={styles.scroll}>
              <table className="sources" data-testid="opml-problems">
                <thead>
                  <tr>
                    <th scope="col">Line</th>
                    <th scope="col">Problem</th>
                    <th scope="col">What</th>
                  </tr>
                </thead>
                <tbody>
                  {plan.problems.map((p) => (
                    <tr key={`${p.line}-${p.code}-${p.url ?? ""}`} data-severity={p.severity}>
                      <td className="num">{p.line}</td>
                      <td>
                        <span className={p.severity === "error" ? styles.refused : styles.sub}>
                          {p.code}
                        </span>
                      </td>
                      <td className={styles.sub}>{p.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          {applied ? (
            <p className={styles.message} role="status">
              Import done: {applied.added.length} added
              {applied.addedMeanwhile.length
                ? `, ${applied.addedMeanwhile.length} became sources meanwhile`
                : ""}
              {applied.auditId ? ` (audit #${applied.auditId})` : ""}.
            </p>
          ) : plan.readable && plan.add.length > 0 ? (
            <div className={styles.actions}>
              <button
                type="button"
                className={styles.button}
                disabled={stale || run.isPending}
                onClick={() => planned && run.mutate({ ...planned, dryRun: false })}
              >
                Import {plan.add.length} source(s)
              </button>
              {stale ? (
                <span className={styles.sub}>The file changed: dry run again first.</span>
              ) : null}
            </div>
          ) : null}
        </section>
      ) : null}
    </div>
  );
}
