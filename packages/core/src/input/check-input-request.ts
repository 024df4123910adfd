import { InvalidInputRequestError } from '../errors/invalid-input-request-error.js';
import type { InputRequest } from './input-request.js';

// Structural checks of an input request against the 2026-07-28 schema (core cannot import the
// SDK's zod schemas). A client validates every `inputRequests` entry; one it rejects leaves the
// task waiting for its whole TTL, so the tool hears of the mistake at once instead.

type Problem = string | undefined;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
const isTitledOptions = (value: unknown): boolean =>
  Array.isArray(value) && value.every((option) => isObject(option) && typeof option['const'] === 'string' && typeof option['title'] === 'string');

function optional(object: Record<string, unknown>, where: string, checks: Record<string, (value: unknown) => boolean>, expected: string): Problem {
  for (const [name, check] of Object.entries(checks)) {
    if (object[name] !== undefined && !check(object[name])) return `${where}.${name} must be ${expected}`;
  }
  return undefined;
}

const isString = (value: unknown) => typeof value === 'string';
const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value);

function fieldProblem(field: unknown, where: string): Problem {
  if (!isObject(field)) return `${where} must be an object`;
  const text = optional(field, where, { title: isString, description: isString }, 'a string');
  if (text) return text;
  switch (field['type']) {
    case 'string': {
      if (field['enum'] !== undefined && !isStringArray(field['enum'])) return `${where}.enum must be an array of strings`;
      if (field['enumNames'] !== undefined && !isStringArray(field['enumNames'])) return `${where}.enumNames must be an array of strings`;
      if (field['oneOf'] !== undefined && !isTitledOptions(field['oneOf'])) return `${where}.oneOf must be an array of { const, title } strings`;
      const format = field['format'];
      if (format !== undefined && !['email', 'uri', 'date', 'date-time'].includes(format as string)) {
        return `${where}.format must be "email", "uri", "date" or "date-time"`;
      }
      return optional(field, where, { minLength: isNumber, maxLength: isNumber }, 'a number') ?? optional(field, where, { default: isString }, 'a string');
    }
    case 'number':
    case 'integer':
      return optional(field, where, { minimum: isNumber, maximum: isNumber, default: isNumber }, 'a number');
    case 'boolean':
      return optional(field, where, { default: (value) => typeof value === 'boolean' }, 'a boolean');
    case 'array': {
      const items = field['items'];
      const plain = isObject(items) && items['type'] === 'string' && isStringArray(items['enum']);
      const titled = isObject(items) && isTitledOptions(items['anyOf']);
      if (!plain && !titled) return `${where}.items must be { type: "string", enum: [...] } or { anyOf: [{ const, title }] } (multiple choice)`;
      return optional(field, where, { minItems: isNumber, maxItems: isNumber }, 'a number') ?? optional(field, where, { default: isStringArray }, 'an array of strings');
    }
    default:
      return `${where}.type must be "string", "number", "integer", "boolean" or "array" (elicitation forms have primitive fields only)`;
  }
}

function elicitProblem(params: Record<string, unknown>): Problem {
  if (typeof params['message'] !== 'string') return 'params.message must be a string';
  const mode = params['mode'];
  if (mode === 'url') {
    const url = params['url'];
    if (typeof url !== 'string' || !URL.canParse(url)) return 'params.url must be an absolute URL (url mode)';
    if (params['elicitationId'] !== undefined && typeof params['elicitationId'] !== 'string') return 'params.elicitationId must be a string';
    return undefined;
  }
  if (mode !== undefined && mode !== 'form') return 'params.mode must be "form" or "url"';
  const schema = params['requestedSchema'];
  if (!isObject(schema)) return 'params.requestedSchema is required in form mode: { type: "object", properties: { … } }';
  if (schema['type'] !== 'object') return 'params.requestedSchema.type must be "object"';
  const properties = schema['properties'];
  if (!isObject(properties)) return 'params.requestedSchema.properties must be an object of field schemas';
  for (const [name, field] of Object.entries(properties)) {
    const problem = fieldProblem(field, `params.requestedSchema.properties.${name}`);
    if (problem) return problem;
  }
  const required = schema['required'];
  if (required !== undefined && !isStringArray(required)) return 'params.requestedSchema.required must be an array of strings';
  return undefined;
}

function sampleProblem(params: Record<string, unknown>): Problem {
  const messages = params['messages'];
  if (!Array.isArray(messages)) return 'params.messages must be an array of messages';
  for (const [index, message] of messages.entries()) {
    const where = `params.messages[${index}]`;
    if (!isObject(message)) return `${where} must be an object`;
    if (message['role'] !== 'user' && message['role'] !== 'assistant') return `${where}.role must be "user" or "assistant"`;
    const content = message['content'];
    const blocks = Array.isArray(content) ? content : [content];
    if (!blocks.every((block) => isObject(block) && typeof block['type'] === 'string')) return `${where}.content must be a content block or an array of them`;
  }
  if (!Number.isSafeInteger(params['maxTokens'])) return 'params.maxTokens must be an integer';
  const includeContext = params['includeContext'];
  if (includeContext !== undefined && !['none', 'thisServer', 'allServers'].includes(includeContext as string)) {
    return 'params.includeContext must be "none", "thisServer" or "allServers"';
  }
  return (
    optional(params, 'params', { systemPrompt: isString }, 'a string') ??
    optional(params, 'params', { temperature: isNumber }, 'a number') ??
    optional(params, 'params', { stopSequences: isStringArray }, 'an array of strings') ??
    optional(params, 'params', { metadata: isObject, modelPreferences: isObject, toolChoice: isObject }, 'an object') ??
    optional(params, 'params', { tools: (value) => Array.isArray(value) && value.every(isObject) }, 'an array of tool objects')
  );
}

/**
 * Checks that `request` is an input request the protocol defines: a form elicitation with a
 * `requestedSchema` of primitive fields, a URL elicitation with a URL, a sampling request with
 * `messages` and `maxTokens`, or `roots/list`. Throws {@link InvalidInputRequestError} (-32602).
 */
export function checkInputRequest(key: string, request: InputRequest): void {
  const params: unknown = request.params;
  let problem: Problem;
  if (!isObject(params)) problem = 'params must be an object';
  else if (request.method === 'elicitation/create') problem = elicitProblem(params);
  else if (request.method === 'sampling/createMessage') problem = sampleProblem(params);
  else if (request.method !== 'roots/list') problem = `unknown method ${String(request.method)}`;
  if (problem) throw new InvalidInputRequestError(key, problem);
}
