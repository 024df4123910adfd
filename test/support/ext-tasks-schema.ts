// The official JSON Schema of the tasks extension, revision 2026-07-28 (vendored under
// vendor/ext-tasks/2026-07-28, see its SOURCE.md), and what the raw clients of the tests check
// every message against: each `tasks/*` result, each `CreateTaskResult`, each JSON-RPC error and
// each `notifications/tasks` frame a 2026-07-28 test sees, on both request paths and both stores.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

const SCHEMA_URL = new URL('../../vendor/ext-tasks/2026-07-28/schema.json', import.meta.url);
const schema = JSON.parse(readFileSync(fileURLToPath(SCHEMA_URL), 'utf8')) as { $id: string };
const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema(schema);

const validators = new Map<string, ValidateFunction>();
function validatorOf(definition: string): ValidateFunction {
  let validate = validators.get(definition);
  if (!validate) {
    validate = ajv.getSchema(`${schema.$id}#/$defs/${definition}`);
    if (!validate) throw new Error(`the vendored schema has no definition ${definition}`);
    validators.set(definition, validate);
  }
  return validate;
}

/** The schema definition a result of `method` must satisfy (`undefined`: not the extension's). */
const RESULT_OF: Readonly<Record<string, string>> = {
  'tasks/get': 'GetTaskResult',
  'tasks/update': 'UpdateTaskResult',
  'tasks/cancel': 'CancelTaskResult',
};

/** Why `value` fails `definition`, or `undefined` when it satisfies it. */
export function schemaViolation(definition: string, value: unknown): string | undefined {
  const validate = validatorOf(definition);
  if (validate(value)) return undefined;
  const errors = (validate.errors ?? []).slice(0, 8).map((error) => `${error.instancePath || '/'} ${error.message}`);
  return `not a valid ${definition} (ext-tasks 2026-07-28 schema): ${errors.join('; ')}: ${JSON.stringify(value).slice(0, 500)}`;
}

/**
 * What is wrong with the answer to a 2026-07-28 request of `method`, by the schema: a `tasks/*`
 * result, a `tools/call` result that is a task (`resultType: "task"`), a JSON-RPC error;
 * `undefined` when it conforms or is none of these.
 */
export function replyViolation(method: string, message: Record<string, any>): string | undefined {
  // An HTTP refusal (401, 403, 429) answers with an OAuth or plain body: no JSON-RPC message.
  if (message['jsonrpc'] !== '2.0') return undefined;
  if (message['error'] !== undefined) return schemaViolation('Error', message['error']);
  const result = message['result'];
  if (result === undefined) return undefined;
  const definition = RESULT_OF[method] ?? (method === 'tools/call' && result?.['resultType'] === 'task' ? 'CreateTaskResult' : undefined);
  return definition === undefined ? undefined : schemaViolation(definition, result);
}

/** What is wrong with a frame of a listen stream: a `notifications/tasks` is checked as `TaskStatusNotification`. */
export function frameViolation(message: Record<string, any>): string | undefined {
  if (message['jsonrpc'] !== '2.0') return undefined;
  if (message['method'] === 'notifications/tasks') return schemaViolation('TaskStatusNotification', message);
  if (message['error'] !== undefined) return schemaViolation('Error', message['error']);
  return undefined;
}

/** Throws when the answer to `method` breaks the schema. */
export function assertReplyConforms(method: string, message: Record<string, any>): void {
  const violation = replyViolation(method, message);
  if (violation !== undefined) throw new Error(`${method}: ${violation}`);
}
