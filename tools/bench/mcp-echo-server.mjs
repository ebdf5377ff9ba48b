// The baseline for tools/bench/mcp.mjs: a bare SDK (v2) McpServer over stdio with one echo
// tool, served for both protocol eras as ours is (serveStdio).
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

serveStdio(() => {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo the text back', inputSchema: z.object({ text: z.string().optional() }), outputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text: JSON.stringify({ text: text ?? '' }) }], structuredContent: { text: text ?? '' } }),
  );
  return server;
});
