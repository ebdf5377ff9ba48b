// The baseline of the MCP figures: a bare SDK (v2) McpServer with one tool, `getMe`, answering
// the JSON text in $BARE_TOOL_TEXT (ours's own getMe answer) as text and structuredContent.
// Over stdio by default, served for both protocol eras as ours is (serveStdio); with --http,
// behind the SDK's Node Streamable HTTP transport (a session per initialize), printing its URL
// on stdout.
import { McpServer } from '@modelcontextprotocol/server';

const text = process.env.BARE_TOOL_TEXT ?? '{}';

function build() {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool('getMe', { description: 'The account' }, async () => ({
    content: [{ type: 'text', text }],
    structuredContent: JSON.parse(text),
  }));
  return server;
}

if (process.argv[2] === '--http') {
  // Loaded only here, so that the stdio cold start loads what a bare stdio server loads.
  const { randomUUID } = await import('node:crypto');
  const { createServer } = await import('node:http');
  const { NodeStreamableHTTPServerTransport } = await import('@modelcontextprotocol/node');
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    if (id) return sessions.get(id).handleRequest(req, res);
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
    });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await build().connect(transport);
    return transport.handleRequest(req, res);
  });
  http.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${http.address().port}/mcp\n`));
  process.once('SIGTERM', () => process.exit(0));
} else {
  const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
  serveStdio(() => build());
}
