// Notices: things a run repaired or decided on its own (a stale lock taken over, a damaged pointer
// ignored, a half-written base rebuilt). They go to stderr, one line each, and never stop the run.

export type Notice = (message: string) => void;

export const stderrNotice: Notice = (message) => {
  process.stderr.write(`marft: notice: ${message}\n`);
};
