/** The request header in which proxy.ts tells the root layout the page's path (layouts are not told it). */
export const PAGE_PATH_HEADER = "x-keyfob-page-path";
