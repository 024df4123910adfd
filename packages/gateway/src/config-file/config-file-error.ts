/** A configuration file the gateway refuses: one sentence naming the field; the command exits 2. */
export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
  readonly exitCode = 2;
}
