/**
 * Whether a client declared MCP Apps: apart from the views (apps.ts), so that the stdio server's
 * first tools/list can tell which list to give before the tools are loaded (instance.ts).
 */
import type { ClientCapabilities } from '@modelcontextprotocol/server';

export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
export const UI_MIME = 'text/html;profile=mcp-app';

/** Whether the client declared MCP Apps (the extension, with the HTML profile among its types). */
export function supportsApps(capabilities: ClientCapabilities | undefined): boolean {
  const ui = (capabilities as { extensions?: Record<string, { mimeTypes?: unknown }> } | undefined)?.extensions?.[UI_EXTENSION];
  return Array.isArray(ui?.mimeTypes) && ui.mimeTypes.includes(UI_MIME);
}
