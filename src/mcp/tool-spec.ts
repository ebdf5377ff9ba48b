/**
 * What every tool of the server is, and what its handler gets: the one shape the method tools,
 * the composite tools and the MCP Apps views' tools share, and that the server registers.
 */
import type { Scope } from '../api/scopes.js';
import type { CallToolResult, InputRequiredResult, ToolAnnotations } from '@modelcontextprotocol/server';
import type { AuditEntry } from '../api/backend.js';
import type { Elicitor } from './money/elicit.js';

/** A JSON Schema of a tool's input or output: `type: object` at the top, as MCP requires. */
export type JsonSchema = { type: 'object'; [k: string]: unknown };

/** What a tool handler gets besides its arguments. */
export interface ToolExtra {
  signal: AbortSignal;
  /** Report progress (sent only when the client asked for it with a progress token). */
  progress(progress: number, total: number | undefined, message: string): Promise<void>;
  /** Who is calling: the MCP client as it named itself, its session, and (`--auth oauth`) the OAuth client signed in through (for the audit trail). */
  caller?: {
    client: { name: string; version: string } | null;
    session: string | null;
    oauthClient?: { id: string; name: string; scopes?: readonly string[] };
  };
  /** Ask the user (elicitation), the same way in both protocol eras. */
  elicit: Elicitor;
  /** The client shows this server's MCP Apps views (the plan's card can take the person's confirmation). */
  views?: boolean;
  /** What this request may reach (the person's grant, the door, --scopes: src/mcp/auth/scopes.ts); absent: everything. */
  reach?: ToolReach;
  /**
   * The person already confirmed this exact call outside elicitation (an MCP Apps view's
   * button): a money call over a cap then moves without asking, recorded as confirmed so.
   * Set only by the server's own code (see `moneyCall`), never from a tool's arguments.
   */
  confirmed?: Confirmation;
}

/** How a money call over a cap was confirmed, or why it was not, and by whom (the audit trail's). */
export type Confirmation = NonNullable<AuditEntry['confirmation']>;

/** The scopes a request holds, and why a tool (or a bulk action) that needs another is refused. */
export interface ToolReach {
  scopes: ReadonlySet<Scope>;
  why(needs: readonly Scope[]): string;
}

/** A tool's answer: a result, or a question to the user first (see elicit.ts). */
export type ToolOutcome = CallToolResult | InputRequiredResult;

/** A tool as the server registers and lists it. */
export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
  /**
   * The scopes that let a person's assistant have the tool, any one of them (src/api/scopes.ts):
   * an API method's follows from its definition; runBulk's are those of the actions it may carry.
   */
  scopes: readonly Scope[];
  /** The tool's `_meta` in tools/list (an MCP Apps view's tool: `ui`). */
  _meta?: Record<string, unknown>;
  run(args: Record<string, unknown>, extra: ToolExtra): Promise<ToolOutcome>;
  /**
   * The tool may run as an MCP task (2025-11-25). `gate` runs in the call itself (it may ask
   * the person): `undefined` to go on as a task, else the call's answer (a question) or the
   * task's whole result (a refusal). `work` is the task, the call's own `extra` apart from its
   * signal (the task's) and its progress (the task's status message).
   */
  task?: {
    gate(args: Record<string, unknown>, extra: ToolExtra): Promise<ToolOutcome | undefined>;
    work(args: Record<string, unknown>, extra: ToolExtra): Promise<CallToolResult>;
  };
}
