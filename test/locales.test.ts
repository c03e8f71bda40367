/**
 * Languages of the hosted pages: how a request's language is chosen (ui_locales, then
 * Accept-Language, then English), and that every catalog is complete: the same messages as the
 * English one, with the same placeholders and tags, each of which formats.
 */
import { describe, expect, it } from "vitest";
import { createTranslator } from "use-intl/core";
import { MESSAGES } from "@/i18n/messages";
import { chooseLocale, fromAcceptLanguage, fromUiLocales, LOCALES } from "@/i18n/locales";

describe("choosing the language", () => {
  it("takes the first ui_locales tag Keyfob speaks, by primary language", () => {
    expect(fromUiLocales("de")).toBe("de");
    expect(fromUiLocales("fr-CA de-AT en")).toBe("de");
    expect(fromUiLocales("ja")).toBeUndefined();
    expect(fromUiLocales("")).toBeUndefined();
    expect(fromUiLocales("<script> de")).toBe("de");
  });

  it("weighs Accept-Language by q, earlier first on ties", () => {
    expect(fromAcceptLanguage("de-DE,de;q=0.9,en;q=0.8")).toBe("de");
    expect(fromAcceptLanguage("fr;q=1, en;q=0.5, de;q=0.7")).toBe("de");
    expect(fromAcceptLanguage("en-GB, de")).toBe("en");
    expect(fromAcceptLanguage("de;q=0, en;q=0.1")).toBe("en");
    expect(fromAcceptLanguage("*")).toBeUndefined();
    expect(fromAcceptLanguage("x".repeat(5000))).toBeUndefined();
  });

  it("ui_locales wins over Accept-Language; English when neither names a language Keyfob speaks", () => {
    expect(chooseLocale("de", "en-US,en;q=0.9")).toBe("de");
    expect(chooseLocale("en", "de")).toBe("en");
    expect(chooseLocale("ja", "de-CH")).toBe("de");
    expect(chooseLocale(undefined, "ja")).toBe("en");
    expect(chooseLocale(null, null)).toBe("en");
  });
});

type Tree = { [key: string]: string | Tree };
const leaves = (tree: Tree, prefix = ""): [string, string][] =>
  Object.entries(tree).flatMap(([key, value]) =>
    typeof value === "string" ? [[`${prefix}${key}`, value] as [string, string]] : leaves(value, `${prefix}${key}.`),
  );
/** The {placeholders} and <tags> of an ICU message. */
const slots = (message: string) => [...message.matchAll(/\{(\w+)|<(\w+)>/g)].map((m) => m[1] ?? `<${m[2]}>`).sort();

describe("message catalogs", () => {
  const english = new Map(leaves(MESSAGES.en as unknown as Tree));
  for (const locale of LOCALES) {
    it(`${locale}: the same messages as English, with the same placeholders and tags, all formatting`, () => {
      const catalog = new Map(leaves(MESSAGES[locale] as unknown as Tree));
      expect([...catalog.keys()].sort()).toEqual([...english.keys()].sort());
      const t = createTranslator({
        locale,
        messages: MESSAGES[locale] as never,
        onError: (error) => {
          throw error;
        },
      });
      const values = {
        client: "Acme",
        host: "app.example",
        provider: "Google",
        chain: "Ethereum",
        seconds: 30,
        status: 400,
        detail: "x",
        options: "Google",
        date: "1 Jan",
        created: "1 Jan",
        used: "2 Jan",
        account: "0x1",
        label: "a@b",
        email: "a@b",
        max: 16384,
        name: "Work laptop",
        browser: "Firefox 133",
        os: "Linux",
        device: "Firefox 133 on Linux",
        ip: "203.0.113.7",
        when: "3 minutes ago",
      };
      for (const [key, message] of catalog) {
        expect(slots(message), key).toEqual(slots(english.get(key)!));
        expect(message.trim(), key).not.toBe("");
        const tags = Object.fromEntries(
          slots(message)
            .filter((s) => s.startsWith("<"))
            .map((s) => [s.slice(1, -1), (chunks: unknown) => chunks]),
        );
        expect(
          () => (Object.keys(tags).length ? t.rich(key as never, { ...values, ...tags } as never) : t(key as never, values as never)),
          key,
        ).not.toThrow();
      }
    });
  }
});
