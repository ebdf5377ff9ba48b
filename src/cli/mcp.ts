/** `workspace-mcp mcp`: the MCP server (arrives with the MCP issue). */
import { UsageError } from './args.js';

export async function runMcp(_args: string[]): Promise<void> {
  throw new UsageError('the MCP server is not built yet; use `workspace-mcp serve`');
}
