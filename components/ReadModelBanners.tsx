import Link from "next/link";
import styles from "./ReadModelBanners.module.css";

/**
 * The read model's banners (lib/dashboard/readPath.ts): Redis down and this process serving
 * from memory, no build in 5 build intervals while changes wait, the last build failed. On the
 * Overview and the Read path page; `link` adds the way to the page.
 */
export function ReadModelBanners({
  banners,
  link = false,
}: {
  banners: { kind: "fallback" | "stale" | "failing"; text: string }[];
  link?: boolean;
}) {
  return banners.map((b) => (
    <p
      key={b.kind}
      className={`${styles.banner} ${b.kind === "stale" ? styles.stale : ""}`}
      role="alert"
      data-banner={`read-model-${b.kind}`}
    >
      {b.text}
      {link ? (
        <>
          {" "}
          <Link href="/read-path">Read path →</Link>
        </>
      ) : null}
    </p>
  ));
}
