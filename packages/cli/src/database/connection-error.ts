import { CommandError } from '../command-errors.js';

/** What the error of a failed connection means to an operator; the raw pg or socket error otherwise. */
export function explainConnectionError(error: unknown, url: URL, timeoutMs: number): Error {
  const where = `${url.hostname}:${url.port || '5432'}`;
  const err = error as { code?: string; message?: string } | undefined;
  const message = err?.message ?? String(error);
  const code = err?.code;
  if (/does not support SSL/i.test(message)) {
    return new CommandError(
      `the server at ${where} does not accept TLS, but the URL asks for it (sslmode=${url.searchParams.get('sslmode') ?? 'require'}); enable TLS on the server or use sslmode=disable`,
    );
  }
  if (/no encryption/i.test(message) && code === '28000') {
    return new CommandError(`the server at ${where} accepts only TLS connections: add sslmode=require (or verify-full) to the URL`);
  }
  if (code === 'SELF_SIGNED_CERT_IN_CHAIN' || code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return new CommandError(`the TLS certificate of ${where} is not trusted (${code}): give the CA with sslrootcert=<file>, or fix the host name`);
  }
  if (/timeout/i.test(message)) return new CommandError(`could not connect to ${where} within ${timeoutMs / 1000} s (--connect-timeout)`);
  if (code === 'ECONNREFUSED') return new CommandError(`nothing accepts connections at ${where} (connection refused)`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new CommandError(`the host ${url.hostname} was not found`);
  if (code === '28P01' || code === '28000') return new CommandError(`the server at ${where} refused the login: ${message}`);
  if (code === '3D000') return new CommandError(`the database ${decodeURIComponent(url.pathname.slice(1))} does not exist on ${where}`);
  return error instanceof Error ? error : new Error(message);
}
