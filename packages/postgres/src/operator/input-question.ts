/** One field of the form a task asks its owner to fill in. */
export interface QuestionField {
  readonly name: string;
  /** The schema's type (`string`, `number`, `integer`, `boolean`), or `choice` for an enum. */
  readonly type: string;
  readonly title?: string;
  readonly description?: string;
  readonly required: boolean;
  /** The values (with their titles) an enum offers. */
  readonly choices?: readonly string[];
}

/** The question a task waits on, as the form its owner is shown. */
export interface InputQuestion {
  readonly method: string;
  /** A form or URL elicitation's message; absent for other requests (sampling, roots). */
  readonly message?: string;
  readonly mode?: string;
  readonly fields?: readonly QuestionField[];
}

const MAX_FIELDS = 50;
const MAX_TEXT = 500;

/**
 * An input request as the question it is: the method, the elicitation's message and the fields of
 * its requested schema. These are the tool's own words (what the server asks), shown to operators
 * so that they see why a task waits; the owner's answer stays keys and size. A URL elicitation's
 * URL is not shown (it may carry a one-time secret), nor a sampling request's messages.
 */
export function inputQuestionOf(request: unknown): InputQuestion {
  const record = objectOf(request);
  const method = typeof record['method'] === 'string' ? record['method'] : '?';
  if (method !== 'elicitation/create') return { method };
  const params = objectOf(record['params']);
  const mode = typeof params['mode'] === 'string' ? params['mode'] : 'form';
  const message = typeof params['message'] === 'string' ? clip(params['message']) : '';
  if (mode !== 'form') return { method, mode, message };
  const schema = objectOf(params['requestedSchema']);
  const required = new Set(Array.isArray(schema['required']) ? schema['required'].filter((name): name is string => typeof name === 'string') : []);
  const fields = Object.entries(objectOf(schema['properties']))
    .slice(0, MAX_FIELDS)
    .map(([name, value]) => fieldOf(name, objectOf(value), required.has(name)));
  return { method, mode, message, fields };
}

function fieldOf(name: string, schema: Record<string, unknown>, required: boolean): QuestionField {
  const choices = choicesOf(schema);
  return {
    name: clip(name),
    type: choices ? 'choice' : typeof schema['type'] === 'string' ? schema['type'] : 'string',
    ...(typeof schema['title'] === 'string' ? { title: clip(schema['title']) } : {}),
    ...(typeof schema['description'] === 'string' ? { description: clip(schema['description']) } : {}),
    required,
    ...(choices ? { choices } : {}),
  };
}

/** An enum's values, from `enum` (with `enumNames`), `oneOf` of `const`/`title`, or an array's `items`. */
function choicesOf(schema: Record<string, unknown>): string[] | undefined {
  const items = objectOf(schema['items']);
  const source = Array.isArray(schema['enum']) ? schema : Array.isArray(items['enum']) || Array.isArray(items['anyOf']) ? items : schema;
  if (Array.isArray(source['enum'])) {
    const names = Array.isArray(source['enumNames']) ? source['enumNames'] : [];
    return source['enum'].slice(0, MAX_FIELDS).map((value, i) => clip(typeof names[i] === 'string' && names[i] !== String(value) ? `${String(value)} (${names[i]})` : String(value)));
  }
  const options = Array.isArray(source['oneOf']) ? source['oneOf'] : Array.isArray(source['anyOf']) ? source['anyOf'] : undefined;
  if (!options) return undefined;
  return options.slice(0, MAX_FIELDS).map((option) => {
    const entry = objectOf(option);
    const value = String(entry['const'] ?? '?');
    return clip(typeof entry['title'] === 'string' && entry['title'] !== value ? `${value} (${entry['title']})` : value);
  });
}

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function clip(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}
