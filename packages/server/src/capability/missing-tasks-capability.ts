import { MissingRequiredClientCapabilityError } from '@modelcontextprotocol/server';
import { TASKS_EXTENSION } from './tasks-extension.js';

/** The -32021 error for a request that needs the tasks extension but did not declare it. */
export function missingTasksCapability(what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    `Missing required client capability: ${what} needs the ${TASKS_EXTENSION} extension declared in the request's client capabilities`,
  );
}
