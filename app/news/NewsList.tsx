import { when } from "@/lib/dashboard/format";
import type { ListPage, PublicStory } from "@/lib/readmodel/types";
import styles from "./news.module.css";

/**
 * The language attribute of a story: the model's when it is a BCP 47 tag ("other" is not one);
 * before extraction has run (language null), Bangla when the title is in Bengali script, so a
 * screen reader and the font choice are right from the first minute.
 */
function langOf(story: PublicStory): string | undefined {
  if (story.language && /^[a-z]{2,3}$/.test(story.language)) return story.language;
  if (story.language === null && /[\u0980-\u09FF]/.test(story.title)) return "bn";
  return undefined;
}

/** One page of stories (server-rendered, no script), with its pagination links. */
export function NewsList({
  page,
  ageSeconds,
  stale,
  nextHref,
  firstHref,
}: {
  page: ListPage;
  ageSeconds: number;
  stale: boolean;
  nextHref: string | null;
  firstHref: string | null;
}) {
  return (
    <>
      <p className={styles.edition}>
        Edition {page.model.version}, made {ageSeconds} s ago
        {stale
          ? " (the newest edition cannot be read now: this is the last one this server had)"
          : ""}
      </p>
      {page.items.length === 0 ? (
        <p className={styles.notice}>No stories here yet.</p>
      ) : (
        <ol className={styles.stories}>
          {page.items.map((story) => (
            <li key={story.id} lang={langOf(story)} className={styles.story}>
              <h2 className={styles.title}>
                {story.breaking ? <span className={styles.breaking}>Breaking</span> : null}
                {story.link ? (
                  <a href={story.link} rel="noopener noreferrer nofollow">
                    {story.title}
                  </a>
                ) : (
                  story.title
                )}
              </h2>
              {story.summary ? <p className={styles.summary}>{story.summary}</p> : null}
              <p className={styles.meta} lang="en">
                <span>{story.source.name}</span>
                {story.outlets.length > 1 ? (
                  <span>
                    {story.outlets.length} outlets:{" "}
                    {story.outlets.map((o) => o.source.name).join(", ")}
                  </span>
                ) : null}
                {story.category ? <span>{story.category}</span> : null}
                <time dateTime={story.publishedAt ?? story.firstSeenAt}>
                  {when(story.publishedAt ?? story.firstSeenAt)}
                </time>
              </p>
            </li>
          ))}
        </ol>
      )}
      <nav className={styles.pager} aria-label="Pages">
        {firstHref ? <a href={firstHref}>← First page</a> : null}
        {nextHref ? (
          <a href={nextHref} rel="next">
            Next page →
          </a>
        ) : null}
      </nav>
    </>
  );
}
