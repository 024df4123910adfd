import type { JsonObject } from '../json/json-value.js';

// The params of the requests a task may ask through `inputRequests`, as the 2026-07-28 schema
// defines them. Types, so a tool that leaves out what the protocol requires does not compile;
// `checkInputRequest` holds untyped callers to the same rules at run time.

/** `_meta` of an embedded request. */
type Meta = { _meta?: JsonObject };

/** A string field of an elicitation form. */
export type ElicitStringSchema = {
  type: 'string';
  title?: string;
  description?: string;
  minLength?: number;
  maxLength?: number;
  format?: 'email' | 'uri' | 'date' | 'date-time';
  default?: string;
};

/** A number field of an elicitation form. */
export type ElicitNumberSchema = {
  type: 'number' | 'integer';
  title?: string;
  description?: string;
  minimum?: number;
  maximum?: number;
  default?: number;
};

/** A boolean field of an elicitation form. */
export type ElicitBooleanSchema = { type: 'boolean'; title?: string; description?: string; default?: boolean };

/** A single-choice field: plain values (`enum`, optional legacy `enumNames`) or titled ones (`oneOf`). */
export type ElicitSingleSelectSchema =
  | { type: 'string'; title?: string; description?: string; enum: string[]; enumNames?: string[]; default?: string }
  | { type: 'string'; title?: string; description?: string; oneOf: Array<{ const: string; title: string }>; default?: string };

/** A multiple-choice field. */
export type ElicitMultiSelectSchema = {
  type: 'array';
  title?: string;
  description?: string;
  minItems?: number;
  maxItems?: number;
  items: { type: 'string'; enum: string[] } | { anyOf: Array<{ const: string; title: string }> };
  default?: string[];
};

/** One field of an elicitation form: the protocol allows primitive fields only. */
export type ElicitFieldSchema = ElicitStringSchema | ElicitNumberSchema | ElicitBooleanSchema | ElicitSingleSelectSchema | ElicitMultiSelectSchema;

/** The form a form-mode elicitation asks the user to fill: a flat object of primitive fields. */
export type ElicitRequestedSchema = {
  $schema?: string;
  type: 'object';
  properties: Record<string, ElicitFieldSchema>;
  required?: string[];
};

/** `elicitation/create` in form mode (the default mode): `requestedSchema` is required. */
export type ElicitFormParams = Meta & { mode?: 'form'; message: string; requestedSchema: ElicitRequestedSchema };

/**
 * `elicitation/create` in URL mode. The 2026-07-28 in-band shape has no `elicitationId` (the
 * SDK's `inputRequired.elicitUrl` leaves it out); it is accepted for 2025-11-25 clients.
 */
export type ElicitUrlParams = Meta & { mode: 'url'; message: string; url: string; elicitationId?: string };

/** `elicitation/create` params, as the client receives them. */
export type ElicitParams = ElicitFormParams | ElicitUrlParams;

/** One content block of a sampling message (`text`, `image`, `audio`, `tool_use`, `tool_result`). */
export type SamplingContent = JsonObject & { type: string };

/** One message of a sampling request. */
export type SamplingMessage = Meta & { role: 'user' | 'assistant'; content: SamplingContent | SamplingContent[] };

/** `sampling/createMessage` params. */
export type SampleParams = Meta & {
  messages: SamplingMessage[];
  maxTokens: number;
  systemPrompt?: string;
  includeContext?: 'none' | 'thisServer' | 'allServers';
  temperature?: number;
  stopSequences?: string[];
  metadata?: JsonObject;
  modelPreferences?: JsonObject;
  /** Tools the model may use: the request then needs the client's `sampling.tools` capability. */
  tools?: JsonObject[];
  toolChoice?: JsonObject;
};
