/**
 * The embedded PostgreSQL cannot start here, for a reason the user can act on. Its message is one
 * sentence saying what to do; the launcher prints it without a stack.
 */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}
