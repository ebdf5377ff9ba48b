// The baseline for tools/bench/mcp.mjs: a bare SDK McpServer over stdio with one echo tool.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'echo', version: '1.0.0' });
server.registerTool(
  'echo',
  { description: 'Echo the text back', inputSchema: { text: z.string().optional() }, outputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: 'text', text: JSON.stringify({ text: text ?? '' }) }], structuredContent: { text: text ?? '' } }),
);
await server.connect(new StdioServerTransport());
