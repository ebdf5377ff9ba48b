/**
 * Which tools a server serves (--read-only, --tools, --exclude-tools): checked against the API
 * catalog and the names and annotations of the server's own tools alone, so that bad flags
 * are refused at start-up before the tools themselves (and what they need) are loaded.
 */
import { METHODS } from '../../api/catalog.js';
import type { MethodDef } from '../../api/define.js';
import {
  EXPORT_TOOL_INFO,
  FIND_TOOL_INFO,
  PREVIEW_BULK_TOOL_INFO,
  RUN_BULK_TOOL_INFO,
  WORKSPACE_TOOL_INFO,
} from '../composite/identities.js';

export interface ToolFilter {
  /** Only tools that change nothing (readOnlyHint). */
  readOnly?: boolean;
  /** Only these tools, by name. */
  tools?: string[];
  /** Not these tools, by name. */
  excludeTools?: string[];
}

interface Described {
  name: string;
  annotations: { readOnlyHint?: boolean };
}

/**
 * The filter over `all`: a name in --tools or --exclude-tools that no tool has is an error, and
 * so are flags that leave no tool at all (a server with nothing to call).
 */
export function pick<T extends Described>(all: readonly T[], filter: ToolFilter): T[] {
  const names = new Set(all.map((t) => t.name));
  for (const n of [...(filter.tools ?? []), ...(filter.excludeTools ?? [])]) {
    if (!names.has(n)) throw new Error(`unknown tool: ${n} (tools: ${[...names].join(', ')})`);
  }
  const left = all.filter(
    (t) =>
      (!filter.readOnly || t.annotations.readOnlyHint === true) &&
      (!filter.tools || filter.tools.includes(t.name)) &&
      !(filter.excludeTools ?? []).includes(t.name),
  );
  if (left.length === 0) {
    const flags = [
      ...(filter.readOnly ? ['--read-only'] : []),
      ...(filter.tools ? [`--tools ${filter.tools.join(',')}`] : []),
      ...(filter.excludeTools ? [`--exclude-tools ${filter.excludeTools.join(',')}`] : []),
    ];
    const readOnly = all.filter((t) => t.annotations.readOnlyHint === true).map((t) => t.name);
    throw new Error(
      `the flags ${flags.join(' ')} leave no tool to serve: ` +
        (filter.readOnly
          ? `with --read-only name tools that change nothing (${readOnly.join(', ')}), or drop --read-only`
          : 'name at least one tool the other flags allow'),
    );
  }
  return left;
}

/**
 * Check the tool flags against the catalog alone, before any backend or file is opened; the
 * names of the tools they leave (of a server with search and the directory, as the CLI's).
 */
export function checkToolFilter(filter: ToolFilter): string[] {
  const own = [EXPORT_TOOL_INFO, FIND_TOOL_INFO, WORKSPACE_TOOL_INFO, PREVIEW_BULK_TOOL_INFO, RUN_BULK_TOOL_INFO];
  return pick([...(METHODS as readonly MethodDef[]), ...own], filter).map((t) => t.name);
}
