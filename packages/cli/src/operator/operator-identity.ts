import { hostname, userInfo } from 'node:os';

/**
 * Who acts when the CLI cancels or retries, as the task's history records it: the user of this
 * process on this host. The database credential is shared by operators, so this is the record,
 * not an authentication (the console records its signed-in subject the same way).
 */
export function cliOperator(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = process.env['USER'] ?? 'unknown';
  }
  return `cli:${user}@${hostname()}`;
}
