/**
 * The exit codes of `mcp-tasks`, part of its interface (scripts and deploy jobs branch on them).
 * Later commands reuse these meanings rather than adding new codes for the same situations.
 */
export const ExitCode = {
  /** Done; for `status`, the schema is up to date. */
  ok: 0,
  /** The command could not do its work: the database refused, timed out or failed a statement; for `call`, a JSON-RPC error, a failed or cancelled task, or a server out of reach. */
  failed: 1,
  /** The command line is wrong: unknown command or option, missing or invalid database URL. */
  usage: 2,
  /** `status`: migrations of this release are not applied yet. */
  pending: 3,
  /** `status`, `migrate`: the database has migrations this release does not know (a newer release migrated it). */
  databaseAhead: 4,
  /** `call`: the tool ran and reported an error (`isError: true`), which is printed. */
  toolError: 5,
  /** `call`: stopped by Ctrl-C (128 + SIGINT, as shells report it); a running task was cancelled first. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
