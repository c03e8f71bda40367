/**
 * docs/configuration.md's tables and .env.example, made from the settings table in config.ts
 * (npm run docs:config writes them; test/config-docs.test.ts fails when they differ).
 */
import { configFormats, configGroups, configSettings, type ConfigGroup, type Setting } from "./config";

const START = "<!-- config:start: made by `npm run docs:config` from lib/config.ts, edit it there -->";
const END = "<!-- config:end -->";

function byGroup(): [ConfigGroup, string, Setting[]][] {
  return Object.entries(configGroups).map(([group, intro]) => [
    group as ConfigGroup,
    intro,
    configSettings.filter((setting) => setting.group === group),
  ]);
}

function shownDefault(setting: Setting): string {
  if (setting.shown) return setting.shown;
  if (setting.default === undefined) return "unset";
  return setting.default === "" ? "empty" : `\`${setting.default}\``;
}

/** The configuration tables between the markers, markers included. */
export function configTables(): string {
  const parts = [START, configFormats];
  for (const [group, intro, settings] of byGroup()) {
    parts.push(`## ${group}`);
    if (intro) parts.push(intro);
    const rows = settings.map((s) => `| \`${s.env}\` | ${shownDefault(s)} | ${s.doc} |`);
    parts.push(["| Variable | Default | Meaning |", "|---|---|---|", ...rows].join("\n"));
  }
  parts.push(END);
  return parts.join("\n\n");
}

/** docs/configuration.md with its tables made anew; throws when the markers are missing. */
export function withConfigTables(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/configuration.md: expected the markers ${START} … ${END}`);
  return page.slice(0, start) + configTables() + page.slice(end + END.length);
}

/** Markdown as a comment's plain text: no code quotes or emphasis, links as their address (docs pages by name). */
function plain(markdown: string): string {
  return markdown
    .replace(/\[([^\]]+)\]\(#[^)]+\)/g, "$1 in docs/configuration.md")
    .replace(/\[([^\]]+)\]\(([\w-]+\.md)(#[^)]*)?\)/g, "$1 in docs/$2")
    .replace(/\[([^\]]+)\]\(([^)]+)\)/g, (_, text: string, url: string) => (url.includes(text) ? url : `${text} (${url})`))
    .replace(/\*\*|`/g, "");
}

/** `# `-comment lines of at most 100 characters. */
function comment(text: string): string[] {
  const lines: string[] = [];
  let line = "#";
  for (const word of text.split(/\s+/)) {
    if (line.length > 1 && line.length + 1 + word.length > 100) {
      lines.push(line);
      line = "#";
    }
    line += ` ${word}`;
  }
  return [...lines, line];
}

export function envExample(): string {
  const lines = comment(
    plain(
      "Keyfob configuration. Every variable is optional for local development; `npm start` reads the environment and a .env file in the project folder (copy this one, or use your process manager's env file). Made by npm run docs:config from the table in lib/config.ts: change it there.",
    ),
  );
  lines.push("#", ...comment(plain(configFormats)));
  for (const [group, intro, settings] of byGroup()) {
    lines.push("", `# --- ${group} ---`);
    if (intro) lines.push(...comment(plain(intro)));
    for (const s of settings) {
      const plainDefault = s.default !== undefined && s.default !== "" && !s.shown;
      lines.push("", ...comment(plain(s.doc) + (s.shown ? ` Default: ${plain(s.shown)}.` : "")));
      lines.push(plainDefault ? `${s.env}=${s.default}` : `# ${s.env}=${s.example ?? ""}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
