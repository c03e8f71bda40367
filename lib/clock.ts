/**
 * What time it is, for everything Keyfob decides by time (expiries, lifetimes, windows, records'
 * times): one clock per Keyfob, handed to what needs it, so a test sets the time instead of
 * sleeping. The store never reads the time itself: its operations take `now`. What only paces the
 * process (a cache's refresh, a reload's throttle, how long a shutdown waits, metrics, the log's
 * time stamps) keeps the process's own timers.
 */
export type Clock = { now(): Date };

/** The system's time. */
export const systemClock: Clock = { now: () => new Date() };
