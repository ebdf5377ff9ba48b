/**
 * The stdio server's first tools/list, answered before its tools are loaded: the answers the
 * build recorded beside the command's bundle (tools/build-schemas.mjs asks the built command's
 * stdio server, no flag given, once as a client without MCP Apps and once as one with them).
 * Used only where no flag changes the list (mcp.ts); test/cli/tool-list-early.test.ts holds it
 * to what the wired server lists, flag by flag, era by era. Running from the sources there is
 * no such file, and every tools/list waits for the tools.
 */
import { readFileSync } from 'node:fs';
import type { ListToolsResult } from '@modelcontextprotocol/server';
import { log } from '../common/log.js';

/** Must match LIST_OUT in tools/build-schemas.mjs. */
const BUILT_LIST_FILE = 'tool-list.json';

/**
 * The build's tools/list answer for a client with MCP Apps (`apps`) or without, read anew each
 * time (the SDK may shape what it is given for the client's era); undefined when there is no
 * such file or it is not one of ours (the wired server answers then).
 */
export function builtToolList(apps: boolean): ListToolsResult | undefined {
  let lists: { apps?: unknown; model?: unknown };
  try {
    lists = JSON.parse(readFileSync(new URL(`./${BUILT_LIST_FILE}`, import.meta.url), 'utf8')) as typeof lists;
  } catch {
    return undefined;
  }
  const tools = apps ? lists.apps : lists.model;
  if (!Array.isArray(tools)) return undefined;
  log.debug({ apps }, "tools/list answered from the build's list");
  return { tools: tools as ListToolsResult['tools'] };
}
