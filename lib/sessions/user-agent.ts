import { UAParser } from "ua-parser-js";

/**
 * A browser as a person recognises it (a login session's, a device flow's requester): its name and
 * system, each when its User-Agent names them. ("Device" is the device authorization grant's word.)
 */
export type UserAgent = { browser?: string; os?: string; mobile: boolean };

/** What a User-Agent header describes (ua-parser-js); nothing known for none. */
export function describeUserAgent(userAgent: string | null | undefined): UserAgent {
  if (!userAgent) return { mobile: false };
  const { browser, os, device } = new UAParser(userAgent).getResult();
  return {
    browser: browser.name && (browser.major ? `${browser.name} ${browser.major}` : browser.name),
    os: os.name,
    mobile: device.type === "mobile" || device.type === "tablet",
  };
}
