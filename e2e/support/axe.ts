/**
 * axe-core on a page as it is at this moment (a state: an error shown, a dialog open), in light
 * and in dark mode: the WCAG 2.0, 2.1 and 2.2 A and AA rules, and axe's best-practice rules
 * (unique landmarks, heading order…). The page is not reloaded: the colour
 * scheme is switched in place, so the state stays, and switched back afterwards. A violation fails
 * the test with a list that says what is wrong and where: the rule, its impact, each node's
 * selector, the start of its HTML and axe's reason. AXE_INCOMPLETE=1 also prints what axe could
 * not decide, for a person to check.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page } from "@playwright/test";

/** Every WCAG 2.x level A and AA rule axe-core has (2.2 adds AA rules only). */
export const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

type Scheme = "light" | "dark";
type NodeResult = Awaited<ReturnType<AxeBuilder["analyze"]>>["violations"][number]["nodes"][number];

export type AxeOptions = {
  /** The colour schemes to check the page in; both unless said otherwise. */
  schemes?: Scheme[];
  /**
   * Selectors of third-party markup the project cannot change, left out of the check. Every use
   * says at its call why the node is not ours.
   */
  exclude?: string[];
};

/** Fails, with a readable list, when axe-core finds a WCAG A/AA violation or a best-practice finding on the page as it is now. */
export async function expectNoAxeViolations(page: Page, context: string, options: AxeOptions = {}) {
  const initial: Scheme = (await page.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches)) ? "dark" : "light";
  const schemes = options.schemes ?? [initial, initial === "light" ? "dark" : "light"];
  const found: string[] = [];
  try {
    for (const scheme of schemes) {
      await page.emulateMedia({ colorScheme: scheme });
      await settled(page);
      let builder = new AxeBuilder({ page }).withTags([...WCAG_TAGS, "best-practice"]);
      for (const selector of options.exclude ?? []) builder = builder.exclude(selector);
      const { violations, incomplete } = await builder.analyze();
      // What axe could not decide (text over a gradient, a cell under a sticky header): not a
      // failure, listed on request for a person to look at.
      if (process.env.AXE_INCOMPLETE)
        for (const item of incomplete)
          for (const node of item.nodes)
            console.log(`axe-core could not decide on ${context} [${scheme}]: ${describe(item.id, item.impact, node)}`);
      for (const violation of violations)
        for (const node of violation.nodes) found.push(`[${scheme}] ${describe(violation.id, violation.impact, node)}`);
    }
  } finally {
    if (schemes.at(-1) !== initial) await page.emulateMedia({ colorScheme: initial });
  }
  // Soft: the test goes on, so one run reports every state that fails, not only the first.
  expect.soft(found, `axe-core: WCAG A/AA violations and best-practice findings on ${context} (${page.url()})`).toEqual([]);
}

/** A rule's finding on one node: the rule, its impact, where, the start of the HTML, and why. */
function describe(rule: string, impact: string | null | undefined, node: NodeResult) {
  const html = node.html.replace(/\s+/g, " ").trim();
  const snippet = html.length > 160 ? `${html.slice(0, 160)}…` : html;
  const where = node.target.map((part) => (Array.isArray(part) ? part.join(" >>> ") : part)).join(" ");
  const why = (node.failureSummary ?? [...node.any, ...node.all, ...node.none].map((check) => check.message).join("; "))
    .replace(/^Fix (any|all) of the following:\s*/i, "")
    .split("\n")[0]
    ?.trim();
  return `${rule} (${impact ?? "?"}) at ${where}: ${snippet}${why ? `\n    ${why}` : ""}`;
}

/**
 * Waits for the page's finite animations and transitions (a dialog fading in, colours easing to
 * the new scheme) to end, so that axe measures the colours a person sees, not ones in between.
 * Endless ones (a spinner, a loading skeleton) are left running, and so are those of content the
 * browser does not render (a closed <details>: its transitions never advance).
 */
async function settled(page: Page) {
  await page.evaluate(async () => {
    const running = document.getAnimations().filter((animation) => {
      const target = (animation.effect as KeyframeEffect | null)?.target;
      return animation.effect?.getComputedTiming().iterations !== Infinity && target?.checkVisibility() !== false;
    });
    const bound = new Promise((resolve) => setTimeout(resolve, 3_000));
    await Promise.race([Promise.allSettled(running.map((animation) => animation.finished)), bound]);
  });
}
