/** A `Content-Length` header's value as a number; `undefined` when there is none or it is malformed. */
export function contentLengthOf(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}
