// Task tools behind JWT access tokens (RFC 9068). A task belongs to the token's subject, OAuth
// client and resource, so nobody else can read, answer or cancel it; a tool's scopes are needed to
// start it and to touch its tasks later (HTTP 403 insufficient_scope otherwise).
//
// With ISSUER and JWKS_URL set, tokens come from that authorization server. Without them the
// example plays its own issuer: it makes a key pair and prints a token to try, e.g.
//   curl -H "Authorization: Bearer $TOKEN" ...
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PostgresTaskNode, PostgresTaskStore } from '@mcp-tasks/postgres';
import { defineTool, jwtTokenVerifier, McpTasks } from '@mcp-tasks/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { getOAuthProtectedResourceMetadataUrl, requireBearerAuth } from '@modelcontextprotocol/server';
import { exportJWK, generateKeyPair, SignJWT, type JSONWebKeySet } from 'jose';
import * as z from 'zod';

const port = Number(process.env['PORT'] ?? 3000);
const resource = new URL(process.env['RESOURCE'] ?? `http://127.0.0.1:${port}/mcp`);

const report = defineTool({
  name: 'report',
  task: 'optional',
  scopes: ['reports'], // recorded on the task: tasks/get|update|cancel on it need the scope too
  input: z.object({ month: z.string() }),
  async execute({ month }, ctx) {
    await ctx.progress(1, 1);
    return { content: [{ type: 'text', text: `Report for ${month}, made for ${ctx.owner.subject}.` }] };
  },
});

/** The verifier of a real authorization server, or of a local one made up here. */
async function tokenVerifier() {
  const issuer = process.env['ISSUER'];
  const jwksUrl = process.env['JWKS_URL'];
  if (issuer && jwksUrl) return { issuer, verifier: jwtTokenVerifier({ issuer, jwksUrl, resource }) };
  const localIssuer = 'https://issuer.example.test';
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwks: JSONWebKeySet = { keys: [{ ...(await exportJWK(publicKey)), kid: 'local', alg: 'ES256' }] };
  const token = await new SignJWT({ scope: 'reports', client_id: 'example-client' })
    .setProtectedHeader({ alg: 'ES256', kid: 'local' })
    .setIssuer(localIssuer)
    .setSubject('alice')
    .setAudience(resource.href)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);
  console.log(`TOKEN=${token}`);
  return { issuer: localIssuer, verifier: jwtTokenVerifier({ issuer: localIssuer, jwks, resource }) };
}

const databaseUrl = process.env['DATABASE_URL'];
if (!databaseUrl) {
  console.error('Set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).');
  process.exit(2);
}
const { issuer, verifier } = await tokenVerifier();
const store = await PostgresTaskStore.connect({ connectionString: databaseUrl });
const node = await PostgresTaskNode.start(store);
const tasks = new McpTasks({ store, node });
const handler = tasks.handler({ name: 'reports', version: '0.1.0', tools: [report] });

const metadataUrl = getOAuthProtectedResourceMetadataUrl(resource);
// 401 with WWW-Authenticate (and the metadata URL) for a missing, invalid or expired token.
const gate = requireBearerAuth({ verifier, expectedResource: resource, resourceMetadataUrl: metadataUrl });

const edge = {
  async fetch(request: Request): Promise<Response> {
    // RFC 9728 protected resource metadata: where a client learns which issuer to ask for a token.
    if (request.method === 'GET' && new URL(request.url).pathname === new URL(metadataUrl).pathname) {
      return Response.json({ resource: resource.href, authorization_servers: [issuer], scopes_supported: ['reports'], bearer_methods_supported: ['header'] });
    }
    const authInfo = await gate(request);
    if (authInfo instanceof Response) return authInfo;
    return handler.fetch(request, { authInfo });
  },
};

const http = createServer(toNodeHandler(edge));
http.listen(port, process.env['HOST'] ?? '127.0.0.1', () => {
  const { address, port: bound } = http.address() as AddressInfo;
  console.log(`listening on http://${address}:${bound}/mcp`);
});
process.once('SIGTERM', () => {
  http.close();
  void tasks
    .drain(10_000)
    .then(() => http.closeAllConnections())
    .then(() => handler.close())
    .then(() => tasks.close())
    .then(() => process.exit(0));
});
