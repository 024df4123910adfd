/**
 * A connection to PostgreSQL that cannot work as configured (TLS above all), said in one sentence
 * an operator can act on. The connection string is never repeated: it may carry a password.
 * `cause` keeps the driver's error.
 */
export class PostgresConnectionError extends Error {
  override readonly name = 'PostgresConnectionError';
}

/** Node's codes for a certificate chain that does not lead to a trusted CA. */
const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/**
 * `error` explained when it is a TLS misconfiguration of `which` connection string (the pool's,
 * or the direct one); any other error is returned as it is.
 */
export function explainConnectionError(error: unknown, which: string): unknown {
  const err = error as { code?: unknown; message?: unknown; path?: unknown; syscall?: unknown } | null;
  const code = typeof err?.code === 'string' ? err.code : undefined;
  const message = typeof err?.message === 'string' ? err.message : '';
  let sentence: string | undefined;
  if (code !== undefined && UNTRUSTED_CERTIFICATE.has(code)) {
    sentence =
      `PostgreSQL's TLS certificate is not signed by a CA this process trusts (${code}) on ${which}: give the CA that signed it with sslrootcert=<file> ` +
      '(node-postgres verifies the certificate for sslmode=require too; add uselibpqcompat=true for libpq\'s require, which encrypts without verifying).';
  } else if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    sentence = `PostgreSQL's TLS certificate is not valid now (${code}) on ${which}: renew the server's certificate, or check this machine's clock.`;
  } else if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    sentence = `PostgreSQL's TLS certificate does not name the host connected to (${code}) on ${which}: connect by a name the certificate lists, or use uselibpqcompat=true&sslmode=verify-ca to check the CA alone.`;
  } else if (/does not support SSL/i.test(message)) {
    sentence = `PostgreSQL does not accept TLS connections, but ${which} asks for one (sslmode): enable ssl on the server, or use sslmode=disable.`;
  } else if (code === 'ENOENT' || code === 'EACCES') {
    if (err?.syscall === 'open' && typeof err.path === 'string') sentence = `The certificate file ${err.path} of ${which} cannot be read (${code}): check sslrootcert, sslcert and sslkey.`;
  }
  return sentence === undefined ? error : new PostgresConnectionError(sentence, { cause: error });
}
