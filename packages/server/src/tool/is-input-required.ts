import type { InputRequiredResult } from '@modelcontextprotocol/server';

/** Whether `prepare` (or an inline run) answered with an MRTR input-required result. */
export function isInputRequired(value: unknown): value is InputRequiredResult {
  return typeof value === 'object' && value !== null && (value as { resultType?: unknown }).resultType === 'input_required';
}
