/**
 * The filters of the admin lists (clients, accounts, tokens, refresh grants, audit log), read from a
 * query string in one way for the dashboard's pages, its CSV export and the management API. What
 * cannot be a filter is named per field in `errors` (a page shows it at the field, the API answers
 * 400 invalid_request with field_errors) and is never sent to PostgreSQL: it refuses a NUL in text
 * (22021), and a day outside years 1-9999 is out of its range or not an ISO 8601 day in JavaScript.
 */
import { getAddress } from "viem";
import { hasControlCharacter } from "../oauth/params";

/** A query parameter's value, "" when absent. */
export type Get = (name: string) => string;
export type FilterErrors<K extends string> = Partial<Record<K, string>>;

/** The longest text each kind of filter takes: longer is no id, name or email Keyfob stores. */
export const MAX_SEARCH = 200;
export const MAX_CLIENT_ID = 128;
/** Action and outcome names. */
export const MAX_WORD = 64;
/** Longest value a page shows back in its form, whatever was sent. */
const MAX_SHOWN = 500;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

export const MESSAGES = {
  control: "Must not contain control characters.",
  tooLong: (max: number) => `Must be at most ${max} characters.`,
  address: "Must be a 0x-prefixed 20-byte hex address.",
  day: "Must be a date (YYYY-MM-DD).",
  dayRange: "Must be a day from 0001-01-01 to 9999-12-31.",
  order: "Must be on or after the start date.",
  kind: "Must be vehicle, or empty for every token.",
};

/** Why a filter's text cannot be used, or undefined when it can. */
export function textProblem(value: string, max: number): string | undefined {
  if (hasControlCharacter(value)) return MESSAGES.control;
  if (value.length > max) return MESSAGES.tooLong(max);
  return undefined;
}

/** A UTC day (YYYY-MM-DD, a real calendar day in years 0001-9999), or why not. */
export function parseDay(value: string): { day: Date } | { error: string } {
  const match = DAY.exec(value);
  if (!match) return { error: MESSAGES.day };
  if (match[1] === "0000") return { error: MESSAGES.dayRange };
  const day = new Date(0);
  // Date.UTC reads years 0-99 as 1900-1999: setUTCFullYear does not.
  day.setUTCFullYear(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return day.toISOString().slice(0, 10) === value ? { day } : { error: MESSAGES.day };
}

/** The day after `day`, or undefined past 9999-12-31 (no bound: nothing is later). */
export function nextDay(day: Date): Date | undefined {
  const next = new Date(day.getTime() + 86400_000);
  return next.getUTCFullYear() > 9999 ? undefined : next;
}

/**
 * Reads a list's filters: each call takes one parameter (trimmed) and returns what to filter by,
 * or undefined when it is empty or invalid; `errors` then names the invalid ones, `values` what
 * was sent (to show back in a form).
 */
export function filterReader<K extends string>(get: Get) {
  const values = {} as Record<K, string>;
  const errors: FilterErrors<K> = {};
  const read = (name: K) => {
    const value = get(name).trim();
    values[name] = value.slice(0, MAX_SHOWN);
    return value;
  };
  const text = (name: K, max: number): string | undefined => {
    const value = read(name);
    const problem = value ? textProblem(value, max) : undefined;
    if (problem) errors[name] = problem;
    return value && !problem ? value : undefined;
  };
  return {
    values,
    errors,
    text,
    /** An account address, EIP-55 checksummed (account ids are stored so; any case is accepted). */
    address(name: K): string | undefined {
      const value = text(name, Infinity);
      if (value === undefined) return undefined;
      if (!ADDRESS.test(value)) {
        errors[name] = MESSAGES.address;
        return undefined;
      }
      return getAddress(value);
    },
    day(name: K): Date | undefined {
      const value = text(name, Infinity);
      if (value === undefined) return undefined;
      const parsed = parseDay(value);
      if ("error" in parsed) errors[name] = parsed.error;
      return "day" in parsed ? parsed.day : undefined;
    },
  };
}

/** `?search=` of the clients and accounts lists (the dashboard's `?q=`). */
export function parseSearch(get: Get, name = "search"): { values: { search: string }; search?: string; errors: FilterErrors<"search"> } {
  const reader = filterReader<"search">((n) => (n === "search" ? get(name) : ""));
  const search = reader.text("search", MAX_SEARCH);
  return { values: reader.values, search, errors: reader.errors };
}

export type HolderQuery = { client: string; account: string };

/** `?client=&account=` of the tokens and refresh-grants lists. */
export function parseHolderQuery(get: Get): {
  values: HolderQuery;
  filter: { clientId?: string; accountId?: string };
  errors: FilterErrors<keyof HolderQuery>;
} {
  const reader = filterReader<keyof HolderQuery>(get);
  const clientId = reader.text("client", MAX_CLIENT_ID);
  const accountId = reader.address("account");
  return { values: reader.values, filter: { clientId, accountId }, errors: reader.errors };
}

export type TokenQuery = HolderQuery & { kind: string };

/** `?client=&account=&kind=` of the tokens list: `kind=vehicle` keeps the vehicle tokens (RFC 8693 token exchange) only. */
export function parseTokenQuery(get: Get): {
  values: TokenQuery;
  filter: { clientId?: string; accountId?: string; vehicle?: boolean };
  errors: FilterErrors<keyof TokenQuery>;
} {
  const holder = parseHolderQuery(get);
  const reader = filterReader<"kind">(get);
  const kind = reader.text("kind", MAX_WORD);
  if (kind !== undefined && kind !== "vehicle") reader.errors.kind = MESSAGES.kind;
  return {
    values: { ...holder.values, ...reader.values },
    filter: { ...holder.filter, ...(kind === "vehicle" && { vehicle: true }) },
    errors: { ...holder.errors, ...reader.errors },
  };
}
