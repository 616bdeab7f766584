"use client";

import Link from "next/link";
import { useState } from "react";
import { utc } from "@/lib/dashboard/format";
import type { Preview } from "@/workers/sources/discover";
import { useAddSourceMutation, useDiscoverMutation, usePreviewMutation } from "./manageHooks";
import { FolderField, type Render, RenderField } from "./SourceFields";
import styles from "./sources.module.css";

type Kind = "feed" | "page" | "stream" | "story-api";

/**
 * Add a source by pasting a site or feed URL: find the feeds it leads to, preview the chosen one
 * (what would be ingested, its validators, the robots.txt and SSRF verdicts), then choose the
 * kind, interval and collectors and save. Nothing is saved before "Save source".
 */
export function AddSource() {
  const [url, setUrl] = useState("");
  const [allowPrivate, setAllowPrivate] = useState(false);
  const [chosen, setChosen] = useState<string | null>(null);
  // A site with no feed: its page itself, watched for headlines (as served or rendered).
  const [pageUrl, setPageUrl] = useState<string | null>(null);
  const discover = useDiscoverMutation();
  const preview = usePreviewMutation();
  const add = useAddSourceMutation();

  const find = (e: React.FormEvent) => {
    e.preventDefault();
    setChosen(null);
    setPageUrl(null);
    preview.reset();
    add.reset();
    discover.mutate(
      { url, allowPrivate },
      {
        onSuccess: ({ discovery }) => {
          const first = discovery.candidates.find((c) => !c.existingId) ?? discovery.candidates[0];
          if (first) choose(first.url);
        },
      },
    );
  };
  const choose = (feedUrl: string) => {
    setChosen(feedUrl);
    add.reset();
    preview.mutate({ url: feedUrl, allowPrivate });
  };
  const discovery = discover.data?.discovery;

  return (
    <div className={styles.manage}>
      <form onSubmit={find} className={styles.form} aria-label="Find feeds">
        <label className={styles.wide}>
          Site or feed URL
          <input
            type="url"
            required
            value={url}
            placeholder="https://example.com/"
            onChange={(e) => setUrl(e.target.value)}
          />
        </label>
        <label className={styles.check}>
          <input
            type="checkbox"
            checked={allowPrivate}
            onChange={(e) => setAllowPrivate(e.target.checked)}
          />
          Allow private addresses (an intranet feed, the simulator on 127.0.0.1)
        </label>
        <button type="submit" className={styles.button} disabled={discover.isPending}>
          {discover.isPending ? "Looking…" : "Find feeds"}
        </button>
      </form>
      {discover.error ? (
        <p className={`${styles.message} ${styles.failed}`} role="alert">
          Refused: {discover.error.message}
        </p>
      ) : null}
      {discovery ? (
        <section className={styles.panel} aria-label="Feeds found">
          <h3>
            Feeds found at {discovery.finalUrl ?? discovery.url}: {discovery.candidates.length}
          </h3>
          {discovery.problem ? (
            <p className={`${styles.message} ${styles.failed}`} role="alert">
              {discovery.problem.code}: {discovery.problem.message}
            </p>
          ) : null}
          {discovery.problem?.code === "no_feed" && discovery.finalUrl ? (
            <button
              type="button"
              className={styles.button}
              onClick={() => {
                add.reset();
                setPageUrl(discovery.finalUrl);
              }}
            >
              Watch this page for headlines instead
            </button>
          ) : null}
          <ul className={styles.candidates}>
            {discovery.candidates.map((c) => (
              <li key={c.url}>
                <label>
                  <input
                    type="radio"
                    name="feed"
                    checked={chosen === c.url}
                    onChange={() => choose(c.url)}
                  />{" "}
                  <strong>{c.title ?? c.url}</strong>{" "}
                  <span className={styles.sub}>
                    {c.url} · {c.type ?? "?"} · {VIA[c.via]}
                  </span>
                  {c.existingId ? (
                    <span className={styles.origin}>already source {c.existingId}</span>
                  ) : null}
                </label>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {preview.isPending ? <p className={styles.sub}>Fetching the preview…</p> : null}
      {preview.error ? (
        <p className={`${styles.message} ${styles.failed}`} role="alert">
          Preview refused: {preview.error.message}
        </p>
      ) : null}
      {pageUrl && !chosen ? (
        <SaveForm
          key={pageUrl}
          url={pageUrl}
          allowPrivate={allowPrivate}
          suggestedName=""
          previewOk
          initialKind="page"
          add={add}
        />
      ) : null}
      {preview.data && chosen ? (
        <>
          <PreviewPanel p={preview.data.preview} />
          <SaveForm
            key={chosen}
            url={chosen}
            allowPrivate={allowPrivate}
            suggestedName={preview.data.preview.feed?.title ?? ""}
            previewOk={preview.data.preview.ok}
            add={add}
          />
        </>
      ) : null}
    </div>
  );
}

const VIA = { direct: "the URL is a feed", link: "advertised by the page", path: "common path" };

function Verdict({ ok, children }: { ok: boolean; children: React.ReactNode }) {
  return (
    <span className={ok ? styles.pass : styles.refused} data-ok={ok}>
      {ok ? "✓ " : "✗ "}
      {children}
    </span>
  );
}

function PreviewPanel({ p }: { p: Preview }) {
  return (
    <section className={styles.panel} aria-label="Preview" data-testid="preview">
      <h3>Preview: {p.feed?.title ?? p.url}</h3>
      <dl className={styles.facts}>
        <div>
          <dt>SSRF check</dt>
          <dd>
            <Verdict ok={p.ssrf.allowed}>{p.ssrf.message}</Verdict>
          </dd>
        </div>
        <div>
          <dt>robots.txt</dt>
          <dd>
            {p.robots ? <Verdict ok={p.robots.allowed}>{p.robots.message}</Verdict> : "not asked"}
          </dd>
        </div>
        <div>
          <dt>Fetch</dt>
          <dd>
            {p.fetch
              ? `${p.fetch.code}${p.fetch.status ? ` (HTTP ${p.fetch.status})` : ""}, ${p.fetch.bytes.toLocaleString("en")} bytes`
              : "not fetched"}
          </dd>
        </div>
        <div>
          <dt>Validators</dt>
          <dd>
            ETag {p.validators.etag ?? "none"} · Last-Modified {p.validators.lastModified ?? "none"}
            {!p.validators.etag && !p.validators.lastModified && p.fetch?.code === "ok" ? (
              <div className={styles.sub}>every poll will download the whole feed</div>
            ) : null}
          </dd>
        </div>
        {p.feed ? (
          <div>
            <dt>Feed</dt>
            <dd>
              {p.feed.format}, {p.feed.entryCount} entries
            </dd>
          </div>
        ) : null}
      </dl>
      {p.problem ? (
        <p className={`${styles.message} ${styles.failed}`} role="alert">
          {p.problem.code}: {p.problem.message}
        </p>
      ) : null}
      {p.feed && p.feed.entries.length > 0 ? (
        <ol className={styles.entries} aria-label="Entries that would be ingested">
          {p.feed.entries.map((e, i) => (
            // Entries may repeat a title or lack a link; their order is the feed's.
            // biome-ignore lint/suspicious/noArrayIndexKey: the list is the feed's order, never reordered
            <li key={i}>
              {e.title || <em>untitled</em>}
              {e.published ? <span className={styles.sub}> · {utc(e.published)}</span> : null}
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}

function SaveForm({
  url,
  allowPrivate,
  suggestedName,
  previewOk,
  initialKind = "feed",
  add,
}: {
  url: string;
  allowPrivate: boolean;
  suggestedName: string;
  previewOk: boolean;
  initialKind?: Kind;
  add: ReturnType<typeof useAddSourceMutation>;
}) {
  const [name, setName] = useState(suggestedName);
  const [kind, setKind] = useState<Kind>(initialKind);
  const [render, setRender] = useState<Render>("http");
  const [pollSeconds, setPollSeconds] = useState(300);
  const [collectors, setCollectors] = useState("A");
  const [folder, setFolder] = useState("");
  const [tickers, setTickers] = useState("");
  const [secret, setSecret] = useState("");
  const save = (e: React.FormEvent) => {
    e.preventDefault();
    add.mutate({
      url,
      name: name.trim() || undefined,
      kind,
      allowPrivate,
      pollIntervalSeconds: pollSeconds,
      collectors: words(collectors),
      ...(folder.trim() ? { folder: folder.trim() } : {}),
      ...(kind === "page" ? { render } : {}),
      ...(kind === "story-api"
        ? { tickers: words(tickers).map((t) => t.toUpperCase()), webhookSecrets: words(secret) }
        : {}),
    });
  };
  const added = add.data?.result;
  return (
    <form onSubmit={save} className={`${styles.form} ${styles.panel}`} aria-label="Save source">
      <h3 className={styles.wide}>Save as a source</h3>
      <label className={styles.wide}>
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />
      </label>
      <label>
        Kind
        <select value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
          <option value="feed">feed (RSS, Atom, JSON Feed; polled)</option>
          <option value="page">page (fallback observer: title and link)</option>
          <option value="stream">stream (server-sent events)</option>
          <option value="story-api">story-api (signed webhooks + catch-up)</option>
        </select>
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
        <input
          value={collectors}
          onChange={(e) => setCollectors(e.target.value)}
          placeholder="A B"
          aria-describedby="collectors-help"
        />
        <span id="collectors-help" className={styles.sub}>
          names, space-separated: two watch the source redundantly
        </span>
      </label>
      <FolderField value={folder} onChange={setFolder} />
      {kind === "page" ? <RenderField value={render} onChange={setRender} /> : null}
      {kind === "story-api" ? (
        <>
          <label>
            Tickers
            <input
              value={tickers}
              onChange={(e) => setTickers(e.target.value)}
              placeholder="ACME GLOBX"
            />
          </label>
          <label>
            Webhook secret
            <input
              value={secret}
              onChange={(e) => setSecret(e.target.value)}
              placeholder="whsec_…"
            />
          </label>
        </>
      ) : null}
      <div className={`${styles.actions} ${styles.wide}`}>
        <button type="submit" className={styles.button} disabled={add.isPending || !!added}>
          Save source
        </button>
        {!previewOk && kind === "feed" ? (
          <span className={styles.sub}>
            The preview found problems: saving anyway polls it as it is.
          </span>
        ) : null}
        {added ? (
          <span className={styles.message} role="status">
            {added.message}.{" "}
            <Link href={`/sources/${encodeURIComponent(added.sourceId)}`}>
              Open {added.sourceId}
            </Link>
          </span>
        ) : null}
        {add.error ? (
          <span className={`${styles.message} ${styles.failed}`} role="alert">
            Not saved: {add.error.message}
          </span>
        ) : null}
      </div>
    </form>
  );
}

const words = (s: string) => s.split(/[\s,]+/).filter(Boolean);
