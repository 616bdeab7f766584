import { describe, expect, it } from "vitest";
import { metrics, parseMsrp } from "./msrp";

describe("bench msrp", () => {
  it("reads the corpus: BOM and header skipped, label and both strings kept", () => {
    const text =
      "\uFEFFQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n" +
      '1\t702876\t702977\tAmrozi accused his brother\tReferring to him, Amrozi accused "his brother"\r\n' +
      "0\t2108705\t2108831\tYucaipa owned Dominick's\tYucaipa bought Dominick's\n\n";
    expect(parseMsrp(text)).toEqual([
      {
        label: true,
        a: "Amrozi accused his brother",
        b: 'Referring to him, Amrozi accused "his brother"',
      },
      { label: false, a: "Yucaipa owned Dominick's", b: "Yucaipa bought Dominick's" },
    ]);
  });

  it("refuses a line that is not a labelled pair, naming the line", () => {
    expect(() => parseMsrp("header\n1\tonly\ttwo\n")).toThrow(/line 2/);
    expect(() => parseMsrp("header\nx\t1\t2\ta\tb\n")).toThrow(/line 2/);
  });

  it("computes accuracy, precision, recall and F1 from the confusion counts", () => {
    const pairs = [
      { label: true, predicted: true },
      { label: true, predicted: true },
      { label: true, predicted: false },
      { label: false, predicted: true },
      { label: false, predicted: false },
    ];
    const m = metrics(pairs);
    expect(m.accuracy).toBeCloseTo(3 / 5);
    expect(m.precision).toBeCloseTo(2 / 3);
    expect(m.recall).toBeCloseTo(2 / 3);
    expect(m.f1).toBeCloseTo(2 / 3);
    expect(metrics([])).toEqual({ accuracy: 0, precision: 0, recall: 0, f1: 0 });
  });
});
