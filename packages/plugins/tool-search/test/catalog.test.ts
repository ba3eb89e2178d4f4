import type { AntlerTool } from "@antler/kernel";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DeferredToolCatalog, globToRegExp, mergePromoted, rankWords } from "../src/index.js";

function fake(name: string, description: string, schema: z.ZodObject = z.object({ q: z.string() })): AntlerTool {
  return tool(() => "ok", { name, description, schema }) as unknown as AntlerTool;
}

const TOOLS = [
  fake("github_create_issue", "Create a new issue in a GitHub repository."),
  fake("github_list_issues", "List issues of a repository, filtered by state and labels."),
  fake("github_get_pull_request", "Get one pull request with its diff stats."),
  fake("slack_post_message", "Post a message to a Slack channel."),
  fake("slack_list_channels", "List the channels of the workspace."),
  fake("weather_forecast", "Seven-day forecast for a city."),
  fake("everything_get-sum", "Returns the sum of two numbers."),
];
const names = (tools: readonly AntlerTool[]) => tools.map((t) => t.name);

describe("tool_search query forms", () => {
  const catalog = new DeferredToolCatalog(TOOLS);

  it("select: loads exactly the named tools, in the order asked, and names the ones that do not exist", () => {
    expect(names(catalog.search("select:slack_post_message,github_create_issue", 5).tools)).toEqual([
      "slack_post_message",
      "github_create_issue",
    ]);
    const partial = catalog.search("select: weather_forecast , github_create_isue", 5);
    expect(names(partial.tools)).toEqual(["weather_forecast"]);
    expect(partial.note).toContain("github_create_isue (did you mean github_create_issue?)");
    expect(catalog.search("select:", 5).error).toMatch(/names no tool/);
  });

  it("+prefix keeps only names starting with the prefix and ranks them by the other words", () => {
    expect(names(catalog.search("+github pull request", 5).tools)).toEqual([
      "github_get_pull_request",
      "github_create_issue",
      "github_list_issues",
    ]);
    expect(names(catalog.search("+slack", 5).tools)).toEqual(["slack_list_channels", "slack_post_message"]);
    expect(names(catalog.search("+GitHub issues", 2).tools)).toEqual(["github_create_issue", "github_list_issues"]);
    const none = catalog.search("+jira ticket", 5);
    expect(none.tools).toEqual([]);
    expect(none.note).toContain('No deferred tool name starts with "jira"');
    expect(none.note).toContain("everything, github, slack, weather");
    expect(catalog.search("+", 5).error).toMatch(/needs a prefix/);
  });

  it("anything else is a case-insensitive regex over names and descriptions, name matches first", () => {
    expect(names(catalog.search("ISSUE", 5).tools)).toEqual(["github_create_issue", "github_list_issues"]);
    // "channel" is in slack_list_channels' name and in slack_post_message's description: the name match ranks first.
    expect(names(catalog.search("channel", 5).tools)).toEqual(["slack_list_channels", "slack_post_message"]);
    expect(names(catalog.search("^weather|sum$", 5).tools)).toEqual(["everything_get-sum", "weather_forecast"]);
    expect(catalog.search("kubernetes", 5)).toEqual({ tools: [], note: "No deferred tool matches /kubernetes/i." });
  });

  it("several plain words that match nothing as one regex are matched word by word, and say so", () => {
    const outcome = catalog.search("post slack message", 5);
    expect(names(outcome.tools)[0]).toBe("slack_post_message");
    expect(outcome.note).toContain("as one expression");
  });

  it("an invalid regex is an error for the model, not an exception", () => {
    const outcome = catalog.search("create_issue(", 5);
    expect(outcome.tools).toEqual([]);
    expect(outcome.error).toMatch(/not a valid regular expression/);
    expect(outcome.error).toMatch(/Escape special characters/);
    expect(catalog.search("   ", 5).error).toMatch(/empty/);
  });

  it("caps results at max_results", () => {
    expect(catalog.search(".", 3).tools).toHaveLength(3);
    expect(catalog.search(".", 50).tools).toHaveLength(TOOLS.length);
  });
});

describe("ranking for auto-promotion", () => {
  const catalog = new DeferredToolCatalog(TOOLS);

  it("scores name words above description words, drops stop words and plurals, keeps only positive scores", () => {
    expect(rankWords("Please list the open Issues of my repos")).toEqual(["list", "open", "issue", "repo"]);
    expect(names(catalog.rank("What's the weather forecast for Lisbon?", 3))).toEqual(["weather_forecast"]);
    expect(names(catalog.rank("post a message to the team channel on slack", 2))).toEqual(["slack_post_message", "slack_list_channels"]);
    expect(catalog.rank("hello there", 3)).toEqual([]);
    expect(catalog.rank("slack", 0)).toEqual([]);
  });
});

describe("catalog hash", () => {
  it("is the same for the same tools in any order, and changes when a tool is added or its schema changes", () => {
    const a = new DeferredToolCatalog(TOOLS).hash;
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(new DeferredToolCatalog([...TOOLS].reverse()).hash).toBe(a);
    expect(new DeferredToolCatalog([...TOOLS, fake("github_merge", "Merge a pull request.")]).hash).not.toBe(a);
    const changed = TOOLS.map((t) => (t.name === "weather_forecast" ? fake(t.name, t.description, z.object({ city: z.string() })) : t));
    expect(new DeferredToolCatalog(changed).hash).not.toBe(a);
  });
});

describe("promoted reducer", () => {
  it("unions names for the same catalog and replaces the record for another catalog", () => {
    const first = mergePromoted(undefined, { catalog_hash: "h1", names: ["a", "b"] });
    expect(mergePromoted(first, { catalog_hash: "h1", names: ["b", "c"] })).toEqual({ catalog_hash: "h1", names: ["a", "b", "c"] });
    expect(mergePromoted(first, { catalog_hash: "h2", names: ["c"] })).toEqual({ catalog_hash: "h2", names: ["c"] });
    expect(mergePromoted(first, undefined)).toBe(first);
    expect(mergePromoted(first, null)).toBeUndefined();
  });
});

describe("deferred globs", () => {
  it("match whole names with * and ?", () => {
    expect(globToRegExp("browser_*").test("browser_click")).toBe(true);
    expect(globToRegExp("browser_*").test("my_browser_click")).toBe(false);
    expect(globToRegExp("get-su?").test("get-sum")).toBe(true);
    expect(globToRegExp("web_fetch").test("web_fetch2")).toBe(false);
  });
});
