import { describe, expect, it } from "vitest";
import { decodeBody } from "./decode";

const decl = (enc: string) => `<?xml version="1.0" encoding="${enc}"?>`;
const latin1 = (s: string) => Buffer.from(s, "latin1");

describe("decodeBody", () => {
  it("a UTF-8 BOM wins over a prolog that says otherwise", () => {
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(`${decl("ISO-8859-1")}<r>café</r>`),
    ]);
    expect(decodeBody(body, "text/xml; charset=windows-1252")).toMatchObject({
      text: `${decl("ISO-8859-1")}<r>café</r>`,
      encoding: "utf-8",
    });
  });

  it("reads UTF-16 LE and BE with a BOM", () => {
    const text = `${decl("UTF-16")}<r>naïve – ok</r>`;
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
    const be = Buffer.from(le);
    be.swap16();
    expect(decodeBody(le).text).toBe(text);
    expect(decodeBody(be).text).toBe(text);
  });

  it("recognises UTF-16 without a BOM from the shape of '<?'", () => {
    const text = `${decl("UTF-16")}<r>ü</r>`;
    expect(decodeBody(Buffer.from(text, "utf16le"))).toMatchObject({ text, encoding: "utf-16le" });
  });

  it("the transport charset outranks the XML declaration", () => {
    const body = latin1(`${decl("UTF-8")}<r>caf\u00e9</r>`);
    expect(decodeBody(body, "application/rss+xml; charset=ISO-8859-1").text).toContain("café");
  });

  it("honours ISO-8859-1 and windows-1252 declared in the prolog", () => {
    expect(decodeBody(latin1(`${decl("ISO-8859-1")}<r>Ana\u00efs</r>`)).text).toContain("Anaïs");
    const euro = Buffer.concat([
      Buffer.from(`${decl("windows-1252")}<r>`),
      Buffer.from([0x80, 0x93]),
      Buffer.from("</r>"),
    ]);
    expect(decodeBody(euro).text).toContain("€“");
  });

  it("ignores an unknown label and defaults to UTF-8", () => {
    const body = Buffer.from(`${decl("no-such-encoding")}<r>테스트</r>`);
    expect(decodeBody(body, "text/xml; charset=bogus").text).toContain("테스트");
  });

  it("reads valid UTF-8 as UTF-8 even when labelled Latin-1 (mislabelled servers)", () => {
    const body = Buffer.from(`${decl("ISO-8859-1")}<r>테스트 café</r>`);
    expect(decodeBody(body)).toMatchObject({ encoding: "utf-8" });
    expect(decodeBody(body).text).toContain("테스트 café");
  });

  it("falls back to windows-1252 when bytes labelled UTF-8 do not decode", () => {
    const body = latin1(`${decl("utf-8")}<r>J\u00fcrgen</r>`);
    expect(decodeBody(body)).toMatchObject({ encoding: "windows-1252" });
    expect(decodeBody(body).text).toContain("Jürgen");
  });
});
