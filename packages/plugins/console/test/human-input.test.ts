import { normalizeClarificationRequest } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { type FormField, formReplyText, validateFormValues } from "../src/human-input.js";

/** The fields exactly as the runtime hands them to the page after normalizing a model's call. */
function normalizedFields(fields: unknown[]): FormField[] {
  const result = normalizeClarificationRequest({ question: "Details?", clarification_type: "missing_info", fields });
  if (!result.ok) throw new Error(result.error);
  return (result.request.fields ?? []) as FormField[];
}

const allTypes = normalizedFields([
  { name: "city", type: "text", required: true },
  { name: "notes", type: "textarea" },
  { name: "people", type: "number", required: true },
  { name: "pace", type: "select", options: ["slow", "fast"], required: true },
  { name: "likes", type: "multi_select", options: ["food", "art"], required: true },
  { name: "flexible", type: "checkbox", required: true },
  { name: "start", type: "date", required: true },
  { name: "unknown_kind", type: "colour" },
]);

describe("v2 form values checked in the page", () => {
  it("takes the runtime's normalized fields as they are (unknown types arrive as text)", () => {
    expect(allTypes.map((f) => f.type)).toEqual(["text", "textarea", "number", "select", "multi_select", "checkbox", "date", "text"]);
  });

  it("names every required field left empty, and accepts an unchecked checkbox as an answer", () => {
    expect(validateFormValues(allTypes, {})).toEqual({
      city: "city is required",
      people: "people is required",
      pace: "Choose an option for pace",
      likes: "Choose at least one option for likes",
      start: "start is required",
    });
    expect(validateFormValues(allTypes, { city: "   " }).city).toBe("city is required");
  });

  it("refuses numbers that are not finite decimals and dates that are not real YYYY-MM-DD days", () => {
    const fields = normalizedFields([
      { name: "n", type: "number" },
      { name: "d", type: "date" },
    ]);
    for (const bad of ["two", "1,5", "Infinity", "NaN", "1e999", "0x10"])
      expect(validateFormValues(fields, { n: bad }).n, bad).toBe("n must be a number");
    for (const good of ["2", "-1.5", ".5", "1e3"]) expect(validateFormValues(fields, { n: good }).n, good).toBeUndefined();
    for (const bad of ["2027-02-30", "2027-13-01", "01/05/2027", "2027-5-1"])
      expect(validateFormValues(fields, { d: bad }).d, bad).toBe("d must be a date as YYYY-MM-DD");
    expect(validateFormValues(fields, { d: "2028-02-29" })).toEqual({});
  });

  it("refuses choices that were not offered", () => {
    expect(validateFormValues(allTypes, { pace: "medium" }).pace).toBe("pace must be one of the options");
    expect(validateFormValues(allTypes, { likes: ["food", "golf"] }).likes).toBe("likes has a choice that is not offered");
  });

  it("accepts a complete form and sends it as one `name: value` line per field, in the form's order", () => {
    const values = {
      city: " Lisbon ",
      notes: "window seat\nvegetarian",
      people: "2",
      pace: "slow",
      likes: ["food", "art"],
      flexible: false,
      start: "2027-05-01",
    };
    expect(validateFormValues(allTypes, values)).toEqual({});
    expect(formReplyText(allTypes, values)).toBe(
      [
        "city: Lisbon",
        "notes: window seat\n  vegetarian",
        "people: 2",
        "pace: slow",
        "likes: food, art",
        "flexible: no",
        "start: 2027-05-01",
        "unknown_kind: (no answer)",
      ].join("\n"),
    );
  });

  it("words its messages with the messages given (the console's reader's language), the same checks either way", () => {
    const fields: FormField[] = [
      { name: "n", type: "number", required: true },
      { name: "pick", type: "select", options: ["a", "b"], required: true },
    ];
    const messages = {
      not_yes_no: (l: string) => `${l}: oui ou non`,
      not_a_list: (l: string) => `${l}: une liste`,
      choose_some: (l: string) => `${l}: au moins un`,
      choice_not_offered: (l: string) => `${l}: hors liste`,
      not_text: (l: string) => `${l}: du texte`,
      choose_one: (l: string) => `${l}: choisir`,
      required: (l: string) => `${l}: requis`,
      not_a_number: (l: string) => `${l}: un nombre`,
      not_a_date: (l: string) => `${l}: une date`,
      not_an_option: (l: string) => `${l}: une des options`,
    };
    expect(validateFormValues(fields, {}, messages)).toEqual({ n: "n: requis", pick: "pick: choisir" });
    expect(validateFormValues(fields, { n: "x", pick: "c" }, messages)).toEqual({ n: "n: un nombre", pick: "pick: une des options" });
    expect(validateFormValues(fields, { n: "x", pick: "c" })).toEqual({ n: "n must be a number", pick: "pick must be one of the options" });
  });
});
