/** The operator console's settings (`/console`); absent: the console is off. */
export interface ConsoleConfig {
  /** What the login form takes (`MCP_TASKS_CONSOLE_TOKEN`); also the key its session cookies are signed with. */
  readonly token: string;
  /** How long a session lasts (`MCP_TASKS_CONSOLE_SESSION_MS`); default 8 hours. */
  readonly sessionMs: number;
  /** Mark the session cookie `Secure`: the public URL (`MCP_TASKS_PUBLIC_URL`) is https. */
  readonly secureCookie: boolean;
}

/** Shorter than this, a console token is too easy to guess through the login form. */
const MIN_TOKEN_LENGTH = 16;
const DEFAULT_SESSION_MS = 8 * 60 * 60 * 1000;

/** The console from the environment: on only when `MCP_TASKS_CONSOLE_TOKEN` is set. */
export function consoleFromEnv(env: NodeJS.ProcessEnv): ConsoleConfig | undefined {
  const token = env['MCP_TASKS_CONSOLE_TOKEN'] || undefined;
  if (token === undefined) return undefined;
  if (token.length < MIN_TOKEN_LENGTH) throw new Error(`MCP_TASKS_CONSOLE_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters`);
  const rawSession = env['MCP_TASKS_CONSOLE_SESSION_MS'];
  const sessionMs = rawSession === undefined || rawSession === '' ? DEFAULT_SESSION_MS : Number(rawSession);
  if (!Number.isSafeInteger(sessionMs) || sessionMs < 1_000) throw new Error(`MCP_TASKS_CONSOLE_SESSION_MS must be an integer >= 1000, got ${JSON.stringify(rawSession)}`);
  return { token, sessionMs, secureCookie: (env['MCP_TASKS_PUBLIC_URL'] ?? '').startsWith('https:') };
}
