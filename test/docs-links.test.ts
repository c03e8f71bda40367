/**
 * Every relative link in README.md, docs/, bench/README.md and lib/<folder>/README.md resolves: the file
 * (or folder) it names exists, and its `#anchor`, in the same page or another Markdown file, is a
 * heading there by GitHub's slug rules. External (http, https, mailto) links are not fetched. And
 * every folder of lib/ opens with a README saying what it is and what it is not.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.join(import.meta.dirname, "..");
const libFolders = readdirSync(path.join(root, "lib"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => `lib/${entry.name}`);
const pages = [
  "README.md",
  "bench/README.md",
  ...libFolders.map((folder) => `${folder}/README.md`).filter((page) => existsSync(path.join(root, page))),
  ...readdirSync(path.join(root, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.posix.join("docs", name.split(path.sep).join("/"))),
].sort();

/** The Markdown without fenced code blocks and code spans, which hold no links or headings. */
function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split("\n")
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return "";
      }
      return fenced ? "" : line;
    })
    .join("\n");
}

/** A heading's anchor as GitHub makes it: its text without markup, lowercased, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a page's headings; a repeated heading gets -1, -2… as on GitHub. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of prose(markdown).matchAll(/^#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$/gm)) {
    const base = slug(match[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The destinations of a page's inline and reference links. */
function linksOf(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, "");
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]);
  const references = [...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1]);
  return [...inline, ...references];
}

/** The links of `page` (a path from the repository's root) that name no file, or no heading of it. */
function brokenLinks(page: string, markdown = readFileSync(path.join(root, page), "utf8")): string[] {
  return linksOf(markdown).filter((link) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) return false;
    const [target, anchor] = link.split("#", 2);
    if (!target) return !anchorsOf(markdown).has(decodeURIComponent(anchor));
    const file = path.join(root, path.posix.dirname(page), decodeURI(target));
    if (!existsSync(file)) return true;
    if (anchor === undefined) return false;
    return !file.endsWith(".md") || !anchorsOf(readFileSync(file, "utf8")).has(decodeURIComponent(anchor));
  });
}

describe("the documentation's relative links", () => {
  it.each(pages)("%s: every link resolves", (page) => {
    expect(brokenLinks(page), `${page}: links to a missing file or heading`).toEqual([]);
  });

  it("finds the pages, and a missing file or heading", () => {
    expect(pages).toEqual(expect.arrayContaining(["README.md", "bench/README.md", "docs/configuration.md", "docs/decisions/README.md"]));
    const page = [
      "# Here",
      "## `POST /token` with `grant_type=refresh_token`",
      "[a](#here) [b](endpoints.md) [c](missing.md) [d](configuration.md#no-such-heading)",
      "[e](#post-token-with-grant_typerefresh_token) [f](https://example.com/x.md) `[g](in-a-code-span.md)`",
      "```",
      "[h](in-a-code-block.md)",
      "```",
    ].join("\n\n");
    expect(brokenLinks("docs/sample.md", page)).toEqual(["missing.md", "configuration.md#no-such-heading"]);
  });
});

describe("lib/'s folders", () => {
  it.each(libFolders)("%s has a README saying what it is and what it is not", (folder) => {
    const page = path.join(root, folder, "README.md");
    expect(existsSync(page), `${folder}/README.md`).toBe(true);
    const text = readFileSync(page, "utf8");
    expect(text.startsWith(`# ${folder}\n`), `${folder}/README.md opens with its name`).toBe(true);
    expect(text, `${folder}/README.md says what is not in it`).toMatch(/\nNot here: /);
  });
});
