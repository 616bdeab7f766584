import { describe, expect, it } from "vitest";
import type { RepairRunView } from "@/lib/dashboard/repairs";
import { applyOffer } from "./applyOffer";

const run = (id: string, dryRun: boolean, rowsChanged: number, status = "finished") =>
  ({ id, dryRun, rowsChanged, status }) as RepairRunView;

describe("applyOffer (the Repairs page's Apply button)", () => {
  it("offers nothing to apply after a dry run that found 0 rows, or once applied", () => {
    expect(applyOffer([run("2", true, 0)])).toMatchObject({ kind: "nothing" });
    expect(applyOffer([run("3", false, 4), run("2", true, 4)])).toMatchObject({ kind: "nothing" });
    expect(applyOffer([run("4", true, 1, "running"), run("2", true, 0)])).toMatchObject({
      kind: "nothing",
    });
  });

  it("offers Apply after a dry run that found rows, and asks for a dry run first", () => {
    expect(applyOffer([run("2", true, 3)])).toMatchObject({ kind: "rows", dry: { id: "2" } });
    expect(applyOffer([run("5", true, 2), run("3", false, 4)])).toMatchObject({ kind: "rows" });
    expect(applyOffer([])).toEqual({ kind: "no-dry-run" });
    expect(applyOffer([run("1", true, 0, "failed")])).toEqual({ kind: "no-dry-run" });
  });
});
