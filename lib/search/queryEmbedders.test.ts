import { afterAll, describe, expect, it } from "vitest";
import { LEXICAL_MODEL } from "@/lib/embed/lexical";
import { SHIPPED_MODEL } from "@/lib/embed/shipped";
import { closeQueryEmbedders, queryEmbedderFor } from "./queryEmbedders";

// The configured model is an http one here (set before lib/config is first read in this file's
// process): a process embeds queries with it, with the built-in models, and with nothing else.
process.env.WIREWATCH_EMBEDDING_MODEL = "http:nomic-embed-text";
process.env.WIREWATCH_EMBEDDING_URL = "http://127.0.0.1:9/v1";
process.env.WIREWATCH_EMBEDDING_DIMS = "768";

afterAll(() => closeQueryEmbedders());

describe("queryEmbedderFor", () => {
  it("makes the built-in models' embedders once per process", () => {
    const shipped = queryEmbedderFor({ model: SHIPPED_MODEL.model });
    expect(shipped?.info).toEqual(SHIPPED_MODEL);
    expect(queryEmbedderFor({ model: SHIPPED_MODEL.model })).toBe(shipped);
    expect(queryEmbedderFor({ model: LEXICAL_MODEL.model })?.info).toEqual(LEXICAL_MODEL);
  });

  it("makes the configured model's, and none for a model this process was not given", () => {
    const http = queryEmbedderFor({ model: "http:nomic-embed-text@127.0.0.1:9" });
    expect(http?.info).toMatchObject({ model: "http:nomic-embed-text@127.0.0.1:9", dims: 768 });
    expect(queryEmbedderFor({ model: "onnx:multilingual-e5-small@abc" })).toBeNull();
    expect(queryEmbedderFor({ model: "shipped:use-lite@0.1.0" })).toBeNull();
  });
});
