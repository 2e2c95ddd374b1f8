// The permission relay: a small MCP server (stdio) that a headless Claude Code (`-p`) calls as its
// `--permission-prompt-tool` before a tool that needs the user's permission. It posts the
// question to the segment's local ticket proxy (URL with its secret from the environment, set in
// the 0600 MCP config file) and holds the call until the host answers: Allow/Deny on the card or
// the notification, or denied at the ask's deadline. Bundled to dist/permission-mcp.js.
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  PERMISSION_MCP_SERVER,
  PERMISSION_MCP_TOOL,
  PERMISSION_URL_ENV,
  PermissionRelayAnswerSchema,
  PermissionRelayRequestSchema,
  claudePermissionResult,
  type PermissionRelayAnswer,
  type PermissionRelayRequest,
} from '../protocol/permission-relay';

const MAX_ANSWER_BYTES = 64 * 1024;

/** Posts the question and waits as long as the host takes (no time limit here: the host has the deadline). */
function askHost(url: string, request: PermissionRelayRequest, signal?: AbortSignal): Promise<PermissionRelayAnswer> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(request);
    const req = http.request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, signal },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (text.length > MAX_ANSWER_BYTES) req.destroy(new Error('answer too large'));
        });
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`the host answered HTTP ${res.statusCode}`));
          try {
            resolve(PermissionRelayAnswerSchema.parse(JSON.parse(text)));
          } catch {
            reject(new Error('the host sent a malformed answer'));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const url = process.env[PERMISSION_URL_ENV];
  const server = new McpServer({ name: PERMISSION_MCP_SERVER, version: '1.0.0' });
  server.registerTool(
    PERMISSION_MCP_TOOL,
    {
      description: 'Asks the Off-Peak Tasks host whether a tool may run (permission prompt of a headless run).',
      inputSchema: PermissionRelayRequestSchema.shape,
    },
    async (args, extra) => {
      let answer: PermissionRelayAnswer;
      try {
        if (!url) throw new Error(`${PERMISSION_URL_ENV} is not set`);
        answer = await askHost(url, args, extra.signal);
      } catch (err) {
        // Nobody can be asked: deny, and say why (the model sees the message).
        answer = { decision: 'deny', message: `Off-Peak Tasks could not ask the user (${(err as Error).message}); denied.` };
      }
      return { content: [{ type: 'text', text: claudePermissionResult(args, answer) }] };
    },
  );
  await server.connect(new StdioServerTransport());
}

main().catch((err: unknown) => {
  process.stderr.write(`permission-mcp: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
