import { defineTool } from '@mcp-tasks/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import * as z from 'zod';

/** `protocol_error_job`: throws a JSON-RPC error, so its task ends `failed` with that error. */
export const protocolErrorJob = defineTool({
  name: 'protocol_error_job',
  description: 'Fails with a JSON-RPC (protocol) error.',
  task: 'optional',
  input: z.object({}),
  async execute() {
    throw new ProtocolError(ProtocolErrorCode.InternalError, 'The job hit an internal protocol error', { reason: 'simulated' });
  },
});
