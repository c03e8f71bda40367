/**
 * What a person waiting for `next build` sees: each line Next prints, stamped with the seconds since
 * the build began, and while Next says nothing (it compiles for a minute or two after "Creating an
 * optimized production build" without a word), a heartbeat naming the step still running and the
 * time so far: on a terminal one status line rewritten in place, elsewhere (a log, CI) a line every
 * `quietMs`. The clock and the output are passed in, so a test drives it without waiting.
 */

export type BuildProgress = {
  /** A line Next printed. */
  line(text: string): void;
  /** Called every second or so: writes the heartbeat when Next has been quiet. */
  tick(): void;
  /** The build ended: clears the status line. */
  end(): void;
};

// Next's spinner glyphs and colours, which it prints when its own output is a terminal.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences are what is removed
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
const GLYPHS = /^[\s✓○●◐◓◑◒⚠✗▲⨯-]+/u;

export function buildProgress(options: {
  write: (text: string) => void;
  now?: () => number;
  /** A terminal: the heartbeat is one line rewritten in place. */
  tty?: boolean;
  /** Silence after which a heartbeat line is written when not on a terminal. */
  quietMs?: number;
}): BuildProgress {
  const { write, now = () => performance.now(), tty = false, quietMs = 15_000 } = options;
  const started = now();
  let lastOutput = started;
  let step = "Starting next build";
  let statusShown = false;
  const seconds = () => Math.round((now() - started) / 1000);
  const stamp = () => `[${String(seconds()).padStart(4)} s]`;
  const clearStatus = () => {
    if (statusShown) write("\r\u001b[K");
    statusShown = false;
  };

  return {
    line(text) {
      const plain = text.replace(ANSI, "").trimEnd();
      if (!plain.trim()) return;
      clearStatus();
      write(`${stamp()} ${plain.trim()}\n`);
      const named = plain.replace(GLYPHS, "").replace(/\s*\.{3}$|…$/, "");
      if (named) step = named;
      lastOutput = now();
    },
    tick() {
      if (tty) {
        write(`\r\u001b[K${stamp()} ${step}: still working…`);
        statusShown = true;
      } else if (now() - lastOutput >= quietMs) {
        write(`${stamp()} ${step}: still working…\n`);
        lastOutput = now();
      }
    },
    end() {
      clearStatus();
    },
  };
}
