import type { ReactElement } from "react";
import { describe, expect, it, vi } from "vitest";
import { Pager, type Pages } from "./Pager";

function pages(depth: number): Pages {
  return {
    cursor: depth === 0 ? null : `c${depth}`,
    depth,
    forward: vi.fn(),
    back: vi.fn(),
    reset: vi.fn(),
  };
}

type Button = ReactElement<{ disabled: boolean; onClick: () => void; children: string }>;

/** The pager's two buttons and what it says beside them. */
function parts(element: ReactElement) {
  const [back, next, beside] = (element as ReactElement<{ children: unknown[] }>).props
    .children as [Button, Button, unknown];
  return { back, next, beside };
}

describe("Pager", () => {
  it("offers no way back on the first page; forward goes to the answer's next cursor", () => {
    const p = pages(0);
    const { back, next } = parts(
      Pager({ pages: p, next: "c1", firstLabel: "Newest", nextLabel: "Older →" }),
    );
    expect([back.props.children, back.props.disabled]).toEqual(["Newest", true]);
    expect([next.props.children, next.props.disabled]).toEqual(["Older →", false]);
    next.props.onClick();
    expect(p.forward).toHaveBeenCalledWith("c1");
  });

  it("offers no way on past the last page", () => {
    const { back, next } = parts(
      Pager({ pages: pages(2), next: null, backLabel: "← Newer", nextLabel: "Older →" }),
    );
    expect(back.props.disabled).toBe(false);
    expect(next.props.disabled).toBe(true);
  });

  it("goes back to the first page with a first label, one page back with a back label", () => {
    const toFirst = pages(3);
    parts(
      Pager({ pages: toFirst, next: null, firstLabel: "Newest", nextLabel: "Older →" }),
    ).back.props.onClick();
    expect(toFirst.reset).toHaveBeenCalledOnce();
    expect(toFirst.back).not.toHaveBeenCalled();

    const oneBack = pages(3);
    parts(
      Pager({ pages: oneBack, next: null, backLabel: "← Earlier", nextLabel: "Later →" }),
    ).back.props.onClick();
    expect(oneBack.back).toHaveBeenCalledOnce();
    expect(oneBack.reset).not.toHaveBeenCalled();
  });

  it("says what it is given beside the buttons", () => {
    const note = "Searched 5,000 rows";
    const { beside } = parts(
      Pager({
        pages: pages(1),
        next: "c2",
        backLabel: "← Newer",
        nextLabel: "Older →",
        children: note,
      }),
    );
    expect(beside).toBe(note);
  });
});
