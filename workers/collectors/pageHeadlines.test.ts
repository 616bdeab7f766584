import { describe, expect, it } from "vitest";
import { pageHeadlines } from "./pageHeadlines";

describe("pageHeadlines", () => {
  it("reads title and link of each headline, resolved and deduplicated", () => {
    const html = `<!doctype html><html><body>
      <header><a href="/about">About us</a></header>
      <article><h2><a href="/news/1?utm_source=home">Rates &amp; markets: <b>hold</b></a></h2>
        <p>teaser <a href="/news/1">Read more</a></p></article>
      <article><h2><a href="https://other.example/x">সুদের হার অপরিবর্তিত</a></h2></article>
      <article><h2><a href="javascript:alert(1)">Click</a></h2></article>
      <article><h2><a href="/empty"> </a></h2></article>
      <script>var a = "<article><a href='/fake'>fake</a></article>";</script>
    </body></html>`;
    expect(pageHeadlines(html, "https://news.example/index.html")).toEqual([
      { title: "Rates & markets: hold", link: "https://news.example/news/1" },
      { title: "সুদের হার অপরিবর্তিত", link: "https://other.example/x" },
    ]);
  });

  it("survives broken markup", () => {
    expect(() =>
      pageHeadlines("<article><a href='/a'>Unclosed", "https://n.example/"),
    ).not.toThrow();
    expect(pageHeadlines("<a href='/a'>x</a></div></div></article>", "https://n.example/")).toEqual(
      [],
    );
    expect(pageHeadlines("", "https://n.example/")).toEqual([]);
  });
});
