import { describe, expect, it } from "vitest";
import { parseSourcesFile } from "@/workers/sources/sourcesFile";
import { folderNames, folderPath, folderProblem, MAX_FOLDER_LENGTH } from "./folder";

describe("folderPath / folderNames", () => {
  it('joins nested names with "/" and splits them back; no names is the top (null)', () => {
    expect(folderPath(["News", "Tech"])).toBe("News/Tech");
    expect(folderNames("News/Tech")).toEqual(["News", "Tech"]);
    expect(folderPath([])).toBeNull();
    expect(folderNames(null)).toEqual([]);
    expect(folderNames("")).toEqual([]);
  });

  it('keeps a "/" or "\\" inside one name, so the path splits into the same names', () => {
    const names = ["Science/Space", "C:\\Temp", "বাংলা", "Go & Rust"];
    const path = folderPath(names);
    expect(path).toBe("Science\\/Space/C:\\\\Temp/বাংলা/Go & Rust");
    expect(folderNames(path)).toEqual(names);
    for (const tricky of [["/"], ["\\"], ["a\\", "b"], ["\\/", "/\\"], ["a", "", "b"]]) {
      expect(folderNames(folderPath(tricky)), JSON.stringify(tricky)).toEqual(tricky);
    }
  });
});

describe("folderProblem", () => {
  it("accepts what an import or the sources file writes", () => {
    for (const ok of ["News", "News/Tech", "Science\\/Space", "বাংলা/জাতীয়", "x".repeat(200)]) {
      expect(folderProblem(ok), ok).toBeNull();
    }
  });

  it("refuses a path too long, an empty or padded name, a stray backslash, a NUL", () => {
    expect(folderProblem("x".repeat(MAX_FOLDER_LENGTH + 1))).toMatch(
      /is 201 characters long \(at most 200/,
    );
    for (const empty of ["/News", "News/", "News//Tech", " "]) {
      expect(folderProblem(empty), empty).toMatch(/empty folder name/);
    }
    expect(folderProblem("News/ Tech")).toMatch(/spaces around it \(" Tech"\)/);
    expect(folderProblem("News\\Tech")).toMatch(/escapes neither/);
    expect(folderProblem("News\\")).toMatch(/escapes neither/);
    expect(folderProblem("News\u0000")).toMatch(/NUL/);
  });
});

describe("a sources-file source's folder", () => {
  const feed = { id: "f", name: "F", kind: "feed", url: "https://f.example/rss" };

  it('is optional (none: at the top) and takes a "/" path', () => {
    const [top, filed] = parseSourcesFile(
      JSON.stringify({ sources: [feed, { ...feed, id: "g", folder: "News/World" }] }),
    );
    expect(top?.folder).toBeUndefined();
    expect(filed?.folder).toBe("News/World");
  });

  it("names the field when the folder cannot be stored", () => {
    const bad = { ...feed, folder: "News//World" };
    expect(() => parseSourcesFile(JSON.stringify({ sources: [bad] }))).toThrow(
      /sources\[0\]\.folder: has an empty folder name/,
    );
  });
});
