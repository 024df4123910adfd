/** Size limits every store enforces, so one task cannot fill the database or a NOTIFY. */
export const TASK_LIMITS = {
  /** A stored tool result or error, serialised. */
  maxResultBytes: 4 * 1024 * 1024,
  /** A task's stored arguments, serialised. */
  maxArgsBytes: 1024 * 1024,
  /** One input request or answer, serialised. */
  maxInputBytes: 256 * 1024,
  /** Input keys over a task's life. */
  maxInputKeys: 256,
  /** Characters in an input key. */
  maxInputKeyLength: 256,
  /** Characters in a status message; longer ones are cut, not refused (they come from progress). */
  maxStatusMessageLength: 1024,
  /** Characters in a tool name. */
  maxToolNameLength: 256,
  /** Scopes recorded on a task. */
  maxScopes: 64,
} as const;
