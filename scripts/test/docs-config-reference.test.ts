// The renderer behind docs/reference/config-schema.md (scripts/docs-config-reference.mjs): JSON Schema to table rows.
import { describe, expect, it } from "vitest";
import { rowsOf, typeOf } from "../docs-config-reference.mjs";

describe("config reference rows", () => {
  it("flatten nested objects, arrays and maps into dotted keys with type, default, description and required", () => {
    const schema = {
      type: "object",
      properties: {
        models: {
          type: "array",
          default: [],
          items: {
            type: "object",
            required: ["name"],
            properties: {
              name: { type: "string", description: "Unique id." },
              temperature: { type: "number", minimum: 0, maximum: 2 },
            },
          },
        },
        agents: { type: "object", additionalProperties: { type: "object", properties: { soul: { type: "string" } } } },
        mode: { type: "string", enum: ["webhook", "polling"], default: "webhook" },
      },
    };
    expect(rowsOf(schema)).toEqual([
      { path: "models", type: "object[]", default: "[]", description: "", required: false },
      { path: "models[].name", type: "string", default: "", description: "Unique id.", required: true },
      { path: "models[].temperature", type: "number ≥ 0 ≤ 2", default: "", description: "", required: false },
      { path: "agents", type: "map of object", default: "", description: "", required: false },
      { path: "agents.<name>.soul", type: "string", default: "", description: "", required: false },
      { path: "mode", type: '"webhook" \\| "polling"', default: '"webhook"', description: "", required: false },
    ]);
  });

  it("names unions by their members' types and leaves open values as any", () => {
    expect(typeOf({ anyOf: [{ type: "string" }, { type: "integer", exclusiveMinimum: 0 }] })).toBe("string \\| integer > 0");
    expect(typeOf({})).toBe("any");
    expect(typeOf({ type: "string", format: "uri" })).toBe("string (uri)");
    expect(typeOf({ type: "string", pattern: "^[A-Za-z][A-Za-z0-9+.-]*:" })).toBe("string (uri)");
  });
});
