"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useState } from "react";
import { PAGES } from "./pages";

export { PAGES };

/**
 * The dashboard's pages. On a phone (globals.css, below 720 px) the twelve links take four rows,
 * so they fold behind a "Menu" button and open as a list under the header; wider, the button is
 * hidden and the links are always shown. Following a link closes the menu.
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
        {PAGES.map((p) => {
          const current = p.href === "/" ? path === "/" : path.startsWith(p.href);
          return (
            <Link
              key={p.href}
              className="nav-link"
              href={p.href}
              aria-current={current ? "page" : undefined}
            >
              {p.label}
            </Link>
          );
        })}
      </nav>
    </>
  );
}
