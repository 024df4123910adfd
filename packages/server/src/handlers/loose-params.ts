import * as z from 'zod';

/**
 * The params schema of the `tasks/*` handlers: any object. The SDK answers only handlers that
 * were registered with a schema on 2026-07-28; the handlers check the fields themselves, after
 * the capability check, so their errors can say exactly what is wrong.
 */
export const looseParams = z.looseObject({});
