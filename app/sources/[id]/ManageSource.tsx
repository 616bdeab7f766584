"use client";

import { useState } from "react";
import {
  type SourceSettingsJson,
  useChangeSourceMutation,
  useSourceSettingsQuery,
} from "../manageHooks";
import { FolderField, type Render, RenderField } from "../SourceFields";
import styles from "../sources.module.css";

/**
 * A source's settings: read-only for a source from the sources file (the file is its source of
 * truth) or a removed one; an edit form and Remove for a dashboard source. Remove switches the
 * source off and marks it removed; its items, events and audit stay.
 */
export function ManageSource({ id }: { id: string }) {
  const { data, error } = useSourceSettingsQuery(id);
  if (error) return <p className={styles.error}>Settings unavailable: {error.message}</p>;
  const s = data?.settings;
  if (!s) return null;
  if (!s.editable) {
    return (
      <section className={`${styles.panel} ${styles.readOnly}`} data-testid="read-only">
        <h3>Settings (read-only)</h3>
        <p className={styles.sub}>
          {s.configOrigin === "file"
            ? "This source comes from the sources file (wirewatch.config.json), which stays its source of truth: edit or remove it there. Pause and fetch now still work."
            : "This source was removed: it is no longer fetched, and its items, events and audit are kept."}
        </p>
        <Summary s={s} />
      </section>
    );
  }
  return <EditForm s={s} />;
}

function Summary({ s }: { s: SourceSettingsJson }) {
  return (
    <p className={styles.sub}>
      every {s.pollIntervalSeconds} s · collectors {s.collectors.join(", ")}
      {s.folder ? ` · in ${s.folder}` : ""}
      {s.allowPrivate ? " · private addresses allowed" : ""}
      {s.render === "browser" ? " · rendered in a browser" : ""}
      {s.tickers ? ` · tickers ${s.tickers.join(", ")}` : ""}
    </p>
  );
}

function EditForm({ s }: { s: SourceSettingsJson }) {
  const change = useChangeSourceMutation(s.id);
  const [name, setName] = useState(s.name);
  const [url, setUrl] = useState(s.url);
  const [pollSeconds, setPollSeconds] = useState(s.pollIntervalSeconds);
  const [collectors, setCollectors] = useState(s.collectors.join(" "));
  const [allowPrivate, setAllowPrivate] = useState(s.allowPrivate);
  const isStory = s.kind === "story-api";
  const isPage = s.kind === "page";
  const [render, setRender] = useState<Render>(s.render === "browser" ? "browser" : "http");
  const [folder, setFolder] = useState(s.folder ?? "");
  const [tickers, setTickers] = useState((s.tickers ?? []).join(" "));
  const [confirming, setConfirming] = useState(false);

  const save = (e: React.FormEvent) => {
    e.preventDefault();
    change.mutate({
      edit: {
        name,
        url,
        pollIntervalSeconds: pollSeconds,
        collectors: words(collectors),
        allowPrivate,
        folder: folder.trim() || null,
        ...(isPage ? { render } : {}),
        ...(isStory ? { tickers: words(tickers).map((t) => t.toUpperCase()) } : {}),
      },
    });
  };
  return (
    <section className={styles.panel} aria-label="Source settings">
      <form onSubmit={save} className={styles.form} aria-label="Edit source">
        <h3 className={styles.wide}>Settings (added in the dashboard)</h3>
        <label className={styles.wide}>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />
        </label>
        <label className={styles.wide}>
          URL
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} />
        </label>
        <label>
          Poll every (seconds)
          <input
            type="number"
            min={5}
            max={86_400}
            value={pollSeconds}
            onChange={(e) => setPollSeconds(Number(e.target.value))}
          />
        </label>
        <label>
          Collectors
          <input value={collectors} onChange={(e) => setCollectors(e.target.value)} />
        </label>
        <FolderField value={folder} onChange={setFolder} />
        {isPage ? <RenderField value={render} onChange={setRender} /> : null}
        {isStory ? (
          <label className={styles.wide}>
            Tickers (a ticker added has its current stories loaded on save)
            <input value={tickers} onChange={(e) => setTickers(e.target.value)} />
          </label>
        ) : null}
        <label className={styles.check}>
          <input
            type="checkbox"
            checked={allowPrivate}
            onChange={(e) => setAllowPrivate(e.target.checked)}
          />
          Allow private addresses
        </label>
        <div className={`${styles.actions} ${styles.wide}`}>
          <button type="submit" className={styles.button} disabled={change.isPending}>
            Save
          </button>
          {confirming ? (
            <>
              <button
                type="button"
                className={`${styles.button} ${styles.danger}`}
                disabled={change.isPending}
                onClick={() => change.mutate({ remove: true })}
              >
                Remove for good
              </button>
              <button type="button" className={styles.button} onClick={() => setConfirming(false)}>
                Keep it
              </button>
              <span className={styles.sub}>
                It stops being fetched; its items and history stay.
              </span>
            </>
          ) : (
            <button type="button" className={styles.button} onClick={() => setConfirming(true)}>
              Remove…
            </button>
          )}
        </div>
        {change.data ? (
          <p className={`${styles.message} ${styles.wide}`} role="status">
            {change.variables && "remove" in change.variables ? "Remove" : "Save"}:{" "}
            {change.data.result.message}
          </p>
        ) : null}
        {change.error ? (
          <p className={`${styles.message} ${styles.failed} ${styles.wide}`} role="alert">
            Refused: {change.error.message}
          </p>
        ) : null}
      </form>
    </section>
  );
}

const words = (s: string) => s.split(/[\s,]+/).filter(Boolean);
