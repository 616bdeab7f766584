import { describe, expect, it } from "vitest";
import { LEXICAL_MODEL } from "@/lib/embed/lexical";
import { SHIPPED_MODEL } from "@/lib/embed/shipped";
import {
  CALIBRATIONS,
  calibrationFor,
  type MeaningCalibration,
  meaningCalibrationSchema,
  parseCalibration,
  ruleOf,
  withCalibration,
} from "./calibrations";

const RECORD: MeaningCalibration["record"] = {
  corpus: "MSRP msr_paraphrase_train.txt",
  pairs: 4076,
  stages: "shipped stages 1-3",
  greyPairs: 417,
  unguardedGreyPairs: 239,
  unguardedPositives: 95,
  method: "logistic",
  reason: "P(duplicate) reaches 0.5 at 0.9",
  fit: { cosineWeight: 1, intercept: -9, slope: 10, z: 3 },
  crossValidation: {
    folds: 10,
    seed: 13,
    foldsWithThresholds: 10,
    off: { accuracy: "0.744 ± 0.021", f1: "0.817 ± 0.018" },
    on: { accuracy: "0.750 ± 0.020", f1: "0.820 ± 0.018" },
    linked: 10,
    dismissed: 5,
    dismissedPositives: 1,
    leftInReview: 400,
  },
  measuredAt: "2026-12-01",
  command: "npm run -s bench -- meaning --model onnx:/models/e5",
};

const OPERATOR: MeaningCalibration = {
  model: "onnx:multilingual-e5-small@abc",
  languages: ["en", "bn"],
  rule: { cosineWeight: 1, meaningThreshold: 0.9, distinctThreshold: 0.86 },
  record: RECORD,
};

describe("calibrations", () => {
  it("every shipped calibration is valid and filed under its own model id", () => {
    for (const [id, c] of Object.entries(CALIBRATIONS)) {
      expect(meaningCalibrationSchema.parse(c)).toEqual(c);
      expect(c.model).toBe(id);
    }
    // USE-lite was measured on MSRP and gives no verdict; the record says why.
    const shipped = calibrationFor(SHIPPED_MODEL.model);
    expect(shipped?.rule).toBeNull();
    expect(shipped?.record.reason).toMatch(/does not separate/);
    expect(ruleOf(shipped)).toBeNull();
    expect(withCalibration(SHIPPED_MODEL).meaningThreshold).toBeUndefined();
    // The lexical fallback has none: it never gives a stage-4 verdict.
    expect(calibrationFor(LEXICAL_MODEL.model)).toBeUndefined();
    expect(calibrationFor("onnx:never-measured@1")).toBeUndefined();
  });

  it("reads a calibration file and refuses one that is not", () => {
    expect(parseCalibration(JSON.stringify(OPERATOR), "e5.json")).toEqual(OPERATOR);
    expect(() => parseCalibration("{", "e5.json")).toThrow(/e5.json: not JSON/);
    expect(() =>
      parseCalibration(
        JSON.stringify({ ...OPERATOR, rule: { ...OPERATOR.rule, cosineWeight: 3 } }),
      ),
    ).toThrow(/rule.cosineWeight/);
    expect(() =>
      parseCalibration(
        JSON.stringify({
          ...OPERATOR,
          rule: { cosineWeight: 1, meaningThreshold: 0.5, distinctThreshold: 0.6 },
        }),
      ),
    ).toThrow(/distinctThreshold must not be above meaningThreshold/);
    expect(() => parseCalibration(JSON.stringify({ ...OPERATOR, extra: 1 }))).toThrow(/extra/);
  });

  it("turns a calibration into compare's rule, or none when it gives no verdict", () => {
    expect(ruleOf(OPERATOR)).toEqual({
      model: OPERATOR.model,
      languages: ["en", "bn"],
      cosineWeight: 1,
      meaningThreshold: 0.9,
      distinctThreshold: 0.86,
    });
    expect(ruleOf({ ...OPERATOR, rule: null })).toBeNull();
    expect(ruleOf(undefined)).toBeNull();
  });

  it("puts the thresholds and the record on the ModelInfo to register, never on a lexical one", () => {
    const info = { ...SHIPPED_MODEL, model: OPERATOR.model, provider: "onnx" as const };
    expect(withCalibration(info, OPERATOR)).toMatchObject({
      meaningThreshold: 0.9,
      distinctThreshold: 0.86,
      calibration: { corpus: RECORD.corpus, cosineWeight: 1 },
    });
    const none = withCalibration(info, { ...OPERATOR, rule: null });
    expect(none.meaningThreshold).toBeUndefined();
    expect(none.calibration).toMatchObject({ reason: RECORD.reason });
    const unmeasured = withCalibration({ ...info, meaningThreshold: 0.5 }, undefined);
    expect(unmeasured.meaningThreshold).toBeUndefined();
    expect(unmeasured.calibration).toBeUndefined();
    const lexical = withCalibration({ ...LEXICAL_MODEL, meaningThreshold: 0.5 }, OPERATOR);
    expect(lexical.meaningThreshold).toBeUndefined();
    expect(lexical.calibration).toMatchObject({ reason: /spelling, not meaning/ });
    expect(() => withCalibration(SHIPPED_MODEL, OPERATOR)).toThrow(/cannot be stored for/);
  });
});
