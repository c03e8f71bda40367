/** The audit log's CSV export neutralises everything a spreadsheet would run (OWASP CSV injection). */
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { auditCsv } from "@/lib/admin/operations";
import { keyfob } from "@/lib/runtime";
import { tables } from "./support/database";

it("prefixes formulas, also after leading whitespace, and leading tabs and carriage returns", async () => {
  const db = tables(keyfob());
  const clientId = `csv-${randomBytes(4).toString("hex")}`;
  const details = ["=1+1", "+1", "-1", "@SUM(A1)", ' =HYPERLINK("x")', "\t=1", "\r=1", "\tplain", "  @x", "plain", "a=b"];
  for (const detail of details)
    await db.auditEvent.create({ data: { action: "token.failed", outcome: "invalid_request", clientId, detail } });
  const csv = await auditCsv(keyfob(), { account: "0x0", bootstrap: true } as never, { clientId });
  const cells = csv
    .trim()
    .split("\r\n")
    .slice(1)
    .map((line) => line.slice(line.lastIndexOf(',"') + 2, -1).replace(/""/g, '"'));
  expect(cells.reverse()).toEqual([
    "'=1+1",
    "'+1",
    "'-1",
    "'@SUM(A1)",
    '\' =HYPERLINK("x")',
    "'\t=1",
    "'\r=1",
    "'\tplain",
    "'  @x",
    "plain",
    "a=b",
  ]);
});
