import { Ajv2020 } from 'ajv/dist/2020.js';
import { addFormats, AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { RE2JS } from 're2js';

/**
 * `pattern` and `patternProperties` of an upstream's schema run on RE2 (re2js, pure JS), whose
 * matching time is linear in the input: a hostile upstream's `^(a+)+$` cannot hold the event loop
 * (V8's backtracking engine took 86 s for 32 characters). What RE2 cannot run in linear time
 * (backreferences, lookaround) does not compile, so the tool refuses every call.
 */
function linearRegExp(pattern: string): { test(input: string): boolean } {
  const compiled = RE2JS.compile(pattern);
  return { test: (input) => compiled.matcher(input).find() };
}
linearRegExp.code = 'linearRegExp';

let shared: AjvJsonSchemaValidator | undefined;

/** The validator of every mounted tool's `inputSchema` (2020-12, the SDK's options, formats, linear-time patterns). */
export function linearSchemaValidator(): AjvJsonSchemaValidator {
  if (shared) return shared;
  const ajv = new Ajv2020({ strict: false, validateFormats: true, validateSchema: false, allErrors: true, code: { regExp: linearRegExp as never } });
  addFormats(ajv as never);
  shared = new AjvJsonSchemaValidator(ajv as never);
  return shared;
}
