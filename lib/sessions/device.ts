import { UAParser } from "ua-parser-js";

/** A login session's device as a person recognises it: browser and system, each when its User-Agent names them. */
export type Device = { browser?: string; os?: string; mobile: boolean };

/** The device a User-Agent header describes (ua-parser-js); nothing known for none. */
export function describeDevice(userAgent: string | null | undefined): Device {
  if (!userAgent) return { mobile: false };
  const { browser, os, device } = new UAParser(userAgent).getResult();
  return {
    browser: browser.name && (browser.major ? `${browser.name} ${browser.major}` : browser.name),
    os: os.name,
    mobile: device.type === "mobile" || device.type === "tablet",
  };
}
