import type { LineReader } from './line-reader.js';
import type { JsonObject } from './mcp-http-client.js';
import { printable } from '../printable.js';

/** What the user answered to one elicitation: the `ElicitResult` sent back in `inputResponses`. */
export type ElicitAnswer = { action: 'accept'; content: JsonObject } | { action: 'decline' } | { action: 'cancel' };

/**
 * Asks a form elicitation in the terminal: the message, accept/decline/cancel, then each field of
 * `requestedSchema` (strings, numbers, integers, booleans, enums), re-asking a value that does
 * not fit until it does. Input that ends cancels.
 */
export async function askElicitation(params: JsonObject, reader: LineReader, say: (line: string) => void): Promise<ElicitAnswer> {
  say(`The server asks: ${printable(String(params['message'] ?? '(no message)'), true)}`);
  for (;;) {
    const choice = await reader.ask('Answer? [a]ccept, [d]ecline, [c]ancel (default accept): ');
    if (choice === undefined) return { action: 'cancel' };
    const c = choice.trim().toLowerCase();
    if (c === 'd' || c === 'decline') return { action: 'decline' };
    if (c === 'c' || c === 'cancel') return { action: 'cancel' };
    if (c === '' || c === 'a' || c === 'accept' || c === 'y' || c === 'yes') break;
    say('Type a, d or c.');
  }
  const schema = (params['requestedSchema'] ?? {}) as JsonObject;
  const properties = (schema['properties'] ?? {}) as Record<string, JsonObject>;
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
  const content: JsonObject = {};
  for (const [key, field] of Object.entries(properties)) {
    for (;;) {
      const raw = await reader.ask(fieldPrompt(key, field, required.has(key)));
      if (raw === undefined) return { action: 'cancel' };
      const read = readField(raw.trim(), field, required.has(key));
      if ('error' in read) {
        say(read.error);
        continue;
      }
      if ('value' in read) content[key] = read.value;
      break;
    }
  }
  return { action: 'accept', content };
}

function fieldPrompt(key: string, field: JsonObject, required: boolean): string {
  const title = typeof field['title'] === 'string' ? field['title'] : key;
  const description = typeof field['description'] === 'string' && field['description'] !== title ? ` (${field['description']})` : '';
  const choices = enumChoices(field);
  let hint: string;
  if (choices) hint = choices.map((c, i) => `${i + 1}) ${c.title}`).join(' ');
  else if (field['type'] === 'boolean') hint = 'y/n';
  else hint = String(field['type'] ?? 'string');
  const fallback = field['default'] !== undefined ? `, default ${JSON.stringify(field['default'])}` : required ? '' : ', Enter to skip';
  return printable(`  ${title}${description}${required ? ' *' : ''} [${hint}${fallback}]: `);
}

interface Choice {
  readonly value: unknown;
  readonly title: string;
}

function enumChoices(field: JsonObject): Choice[] | undefined {
  if (Array.isArray(field['enum'])) {
    const names = Array.isArray(field['enumNames']) ? (field['enumNames'] as string[]) : [];
    return (field['enum'] as unknown[]).map((value, i) => ({ value, title: names[i] ?? String(value) }));
  }
  const branches = (field['oneOf'] ?? field['anyOf']) as JsonObject[] | undefined;
  if (Array.isArray(branches) && branches.every((b) => 'const' in b)) {
    return branches.map((b) => ({ value: b['const'], title: typeof b['title'] === 'string' ? b['title'] : String(b['const']) }));
  }
  return undefined;
}

type FieldRead = { value: unknown } | { skip: true } | { error: string };

function readField(raw: string, field: JsonObject, required: boolean): FieldRead {
  if (raw === '') {
    if (field['default'] !== undefined) return { value: field['default'] };
    return required ? { error: 'This field is required.' } : { skip: true };
  }
  const choices = enumChoices(field);
  if (choices) {
    const index = Number(raw);
    const chosen = Number.isInteger(index) && index >= 1 && index <= choices.length ? choices[index - 1] : choices.find((c) => String(c.value) === raw || c.title === raw);
    return chosen ? { value: chosen.value } : { error: `Choose one of: ${choices.map((c, i) => `${i + 1}) ${c.title}`).join(' ')}.` };
  }
  switch (field['type']) {
    case 'boolean': {
      const answer = raw.toLowerCase();
      if (['y', 'yes', 'true'].includes(answer)) return { value: true };
      if (['n', 'no', 'false'].includes(answer)) return { value: false };
      return { error: 'Type y or n.' };
    }
    case 'number':
    case 'integer': {
      const value = Number(raw);
      if (!Number.isFinite(value)) return { error: 'Type a number.' };
      if (field['type'] === 'integer' && !Number.isInteger(value)) return { error: 'Type a whole number.' };
      if (typeof field['minimum'] === 'number' && value < field['minimum']) return { error: `At least ${field['minimum']}.` };
      if (typeof field['maximum'] === 'number' && value > field['maximum']) return { error: `At most ${field['maximum']}.` };
      return { value };
    }
    default: {
      if (typeof field['minLength'] === 'number' && raw.length < field['minLength']) return { error: `At least ${field['minLength']} characters.` };
      if (typeof field['maxLength'] === 'number' && raw.length > field['maxLength']) return { error: `At most ${field['maxLength']} characters.` };
      return { value: raw };
    }
  }
}
