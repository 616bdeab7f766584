"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { Suspense, useEffect, useState } from "react";
import { PAGES } from "./pages";
import { useChosenTimeRange } from "./ui/TimeRange";
import { type TimeRange, withTimeRange } from "./ui/timeRanges";

export { PAGES };

/**
 * The dashboard's pages. On a phone (globals.css, below 720 px) the twelve links take four rows,
 * so they fold behind a "Menu" button and open as a list under the header; wider, the button is
 * hidden and the links are always shown. Following a link closes the menu. A time range picked
 * on a page (`?range=`) goes with every link, so the next page opens on it.
 */
export function Nav() {
  const path = usePathname();
  const [open, setOpen] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: closing on every navigation is the point
  useEffect(() => setOpen(false), [path]);
  return (
    <>
      <button
        type="button"
        className="nav-toggle"
        aria-expanded={open}
        aria-controls="site-nav"
        onClick={() => setOpen((o) => !o)}
      >
        {open ? "Close" : "Menu"}
      </button>
      <nav id="site-nav" className="site-nav" data-open={open} aria-label="Dashboard">
        {/* The query is read on the client: a page rendered ahead (none is today) would show
            the links without the range until then, rather than fail to build. */}
        <Suspense fallback={<Links path={path} range={null} />}>
          <RangeLinks path={path} />
        </Suspense>
      </nav>
    </>
  );
}

function RangeLinks({ path }: { path: string }) {
  return <Links path={path} range={useChosenTimeRange()} />;
}

function Links({ path, range }: { path: string; range: TimeRange | null }) {
  return PAGES.map((p) => {
    const current = p.href === "/" ? path === "/" : path.startsWith(p.href);
    return (
      <Link
        key={p.href}
        className="nav-link"
        href={withTimeRange(p.href, range)}
        aria-current={current ? "page" : undefined}
      >
        {p.label}
      </Link>
    );
  });
}
