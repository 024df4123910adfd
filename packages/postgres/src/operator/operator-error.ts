import type { JsonRpcErrorObject } from '@mcp-tasks/core';
import { redactedValue, type RedactedValue } from './redacted-value.js';

/** A failed task's error as an operator sees it: its code and message, its data as keys and size. */
export interface OperatorErrorView {
  readonly code: number;
  readonly message: string;
  readonly data?: RedactedValue | undefined;
}

// A line of a JavaScript (`    at f (file:1:2)`), Python (`  File "x.py", line 3`) or JVM stack.
const STACK_LINE = /^\s*(at\s+\S|File\s+"|Traceback\s|\.\.\.\s*\d+\s+more)/;

/**
 * The one rule of what an operator is shown of a failure (console and `tasks show`): the code and
 * the message, which say what went wrong, and nothing of `error.data` (the owner's, or the
 * tool's internals) but its keys and size, and no stack: a stack says where in the code it went
 * wrong, which is the server's, not the operator's, and may quote the owner's data.
 */
export function operatorErrorOf(error: JsonRpcErrorObject): OperatorErrorView {
  const view: OperatorErrorView = { code: error.code, message: withoutStack(String(error.message ?? '')) };
  return error.data === undefined ? view : { ...view, data: redactedValue(error.data, false) as RedactedValue };
}

/** `text` without the lines of a stack trace it carries (a status message may repeat an error's). */
export function withoutStack(text: string): string {
  const lines = text.split('\n');
  const first = lines.findIndex((line) => STACK_LINE.test(line));
  if (first === -1) return text;
  const kept = lines.slice(0, first).join('\n').trimEnd();
  return `${kept}${kept === '' ? '' : ' '}(stack trace withheld)`;
}
