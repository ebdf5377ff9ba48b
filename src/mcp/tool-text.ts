/**
 * The size of the tool surface, as a model pays for it: every conversation carries the tool
 * definitions before the user says a word. The budgets, and the figures of a tools/list
 * answer measured against them (the budget test and tools/tool-budget.mjs both read these).
 */

/**
 * The budgets: ~5 k tokens of model-visible tool text (as hosts send it: `sent`); Claude Code cuts a
 * description at 2 048.
 */
export const TOOL_BUDGET = { visible: 20_000, total: 40_000, description: 2_048 } as const;

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  _meta?: { ui?: { visibility?: unknown } };
}

interface ToolFigures {
  name: string;
  /** name + description + JSON of inputSchema: the model-visible text itself. */
  visible: number;
  /**
   * The JSON of {name, description, input_schema}, as hosts send a tool to a model (quotes, keys and
   * escapes included); 0 for a tool only an MCP Apps view may call (`visibility: ['app']`), which
   * hosts keep from the model.
   */
  sent: number;
  description: number;
  input: number;
  output: number;
  /** The tool's whole JSON in tools/list. */
  whole: number;
}

export interface SurfaceFigures {
  count: number;
  visible: number;
  /** The tools as hosts send them to a model: the budget holds this figure. */
  sent: number;
  /** The whole tools/list result as JSON. */
  total: number;
  longestDescription: number;
  tools: ToolFigures[];
}

/** Characters a model sees of one tool: its name, description and input schema as JSON. */
function visibleChars(tool: ListedTool): number {
  return tool.name.length + (tool.description ?? '').length + JSON.stringify(tool.inputSchema).length;
}

/** Characters of one tool as hosts send it to a model; 0 for an app-only tool. */
function sentChars(tool: ListedTool): number {
  const visibility = tool._meta?.ui?.visibility;
  if (Array.isArray(visibility) && !visibility.includes('model')) return 0;
  return JSON.stringify({ name: tool.name, description: tool.description ?? '', input_schema: tool.inputSchema }).length;
}

/** Per-tool and total figures of a tools/list result (`{tools}`). */
export function measureTools(list: { tools: ListedTool[] }): SurfaceFigures {
  const tools = list.tools.map((t) => ({
    name: t.name,
    visible: visibleChars(t),
    sent: sentChars(t),
    description: (t.description ?? '').length,
    input: JSON.stringify(t.inputSchema).length,
    output: t.outputSchema ? JSON.stringify(t.outputSchema).length : 0,
    whole: JSON.stringify(t).length,
  }));
  return {
    count: tools.length,
    visible: tools.reduce((n, t) => n + t.visible, 0),
    sent: tools.reduce((n, t) => n + t.sent, 0),
    total: JSON.stringify(list).length,
    longestDescription: Math.max(0, ...tools.map((t) => t.description)),
    tools,
  };
}

/** The figures over budget, one line each; empty when all fit. */
export function overBudget(m: SurfaceFigures): string[] {
  const out: string[] = [];
  if (m.sent > TOOL_BUDGET.visible) out.push(`model-visible tool text ${m.sent} > ${TOOL_BUDGET.visible}`);
  if (m.total > TOOL_BUDGET.total) out.push(`tools/list ${m.total} > ${TOOL_BUDGET.total}`);
  for (const t of m.tools)
    if (t.description > TOOL_BUDGET.description) out.push(`${t.name} description ${t.description} > ${TOOL_BUDGET.description}`);
  return out;
}
