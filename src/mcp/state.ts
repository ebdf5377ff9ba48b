/**
 * What the MCP layer keeps of its own, or is told by the CLI, as small interfaces: the CLI
 * passes in implementations (SQLite: `state/mcp-state.ts`; the workspace directory of each
 * backend), the idempotency keys already bound to the owner or key the server acts for. The
 * contact search index has its own file (`contact-search.ts`).
 *
 * Every method of the state answers a promise: on PostgreSQL the state is read and written on
 * the service threads (service/pool.ts), never on the thread that serves every session; a
 * SQLite file answers at once. An implementation that answers at once is a `Sync` of them
 * (`state/async.ts`).
 */
import type { AuditEntry, AuditPage, AuditQuery } from '../api/backend.js';

export type { AuditPage, AuditQuery };

/** The API's answer to a call, as kept for a replay. */
export interface KeptAnswer {
  status: number;
  body: unknown;
}

/** A call kept under an idempotency key; `answer` only once the call finished. */
export interface KeptCall {
  method: string;
  paramsHash: string;
  answer?: KeptAnswer;
}

/** The idempotency keys of the money tools. */
export interface IdempotencyKeys {
  /**
   * Claim `key` for a call: undefined when this call now owns it, else the call already there
   * (finished, or another call's reservation). Atomic.
   */
  reserve(key: string, method: string, paramsHash: string): Promise<KeptCall | undefined>;
  /** Keep the answer of a reserved call. */
  complete(key: string, answer: KeptAnswer): Promise<void>;
  /** Give the key back (the call moved nothing), so it may be used again. */
  release(key: string): Promise<void>;
}

/**
 * The audit trail of data-changing tool calls. `append` is durable when it resolves; the local
 * backend writes the entries of calls that reach it itself, with the change (`CallOptions.audit`).
 */
export interface AuditTrail {
  append(entry: AuditEntry): Promise<void>;
  read(q: AuditQuery): Promise<AuditPage>;
}

/** What getWorkspace answers. */
export interface WorkspaceView {
  owner: { id: number; name: string | null; email: string | null; plan: 'pro' | 'free' | null };
  projects: Array<{ uuid: string; name: string | null; role: 'owner' | 'member' }>;
  bots: Array<{ id: number; name: string | null; messenger: string | null; project_uuid: string | null; contacts: number | null }>;
  default_bot_id: number | null;
  /** What the answer leaves out or cannot know. */
  notes?: string[];
}

/** What the owner may see, as the backend can tell it. */
export interface WorkspaceDirectory {
  describe(ownerId: number): Promise<Omit<WorkspaceView, 'default_bot_id'>>;
  /** The owner's bots as far as known, cheaply (for completions). */
  botChoices(ownerId: number): Promise<Array<{ id: number; name: string | null }>>;
  /** The owner's only bot, when there is exactly one and the backend can tell. */
  onlyBot(ownerId: number): Promise<number | undefined>;
  /** Currencies of the owner's contact accounts, most used first. */
  currencies(ownerId: number): Promise<string[]>;
}

/**
 * Which contact holds which account, as the API's answers showed it to the owner (or key) the
 * server acts for, kept across processes: a client that starts one server process per call (the
 * MCP Inspector's CLI) reads an account in one and moves money in the next. Only the two ids are
 * kept, never a name or a balance; a hint, not a fact: the money path reads the account live
 * through getContactAccounts of that contact (which the API checks is the owner's) before it
 * applies the caps.
 */
export interface AccountHolders {
  /** The contact an answer showed holding `accountId`, if any did. */
  get(accountId: number): Promise<number | undefined>;
  /** Keep what answers showed: [account id, contact id] pairs. */
  put(pairs: ReadonlyArray<readonly [number, number]>): Promise<void>;
}

/** Caps in minor units of one account's currency. */
export interface Caps {
  perCall?: number;
  daily?: number;
}

/** A reservation in the money window, or which cap it would pass and what the last 24 h hold. */
export type Reservation = { ok: true; id: number } | { ok: false; over: 'amount' | 'daily'; used: number };

/** What the money tools moved per account over the rolling 24 h, kept across restarts. */
export interface MoneyWindow {
  /** Reserve `amount` (minor units) unless it passes a cap (`force`: even then). Atomic. */
  reserve(accountId: number, amount: number, caps: Caps, force: boolean): Promise<Reservation>;
  /** Give a reservation back: the call moved nothing. */
  release(id: number): Promise<void>;
}

/** Where one contact's step of a bulk plan stands: `running` and `unknown` are gone on with (and read back) by the next run. */
export type BulkStepStatus = 'pending' | 'running' | 'unknown' | 'done' | 'failed' | 'skipped';

/** One contact's step of a bulk plan; `note` is what the step knows (the account and its balance before, or why it ended). */
export interface BulkStep {
  contact_id: number;
  status: BulkStepStatus;
  note: Record<string, unknown>;
}

/** How a plan was confirmed, or declined, by whom (the person's first answer is final). */
export interface BulkConfirmation {
  accepted: boolean;
  how: string;
  by: string;
}

/** A bulk plan as kept: what previewBulk fixed (`body`: selection, action, totals), and its confirmation. */
export interface BulkPlan {
  id: string;
  created_at: string;
  expires_at: string;
  body: Record<string, unknown>;
  confirmation: BulkConfirmation | null;
}

/** The bulk plans of one scope and their per-contact steps, kept across restarts. */
export interface BulkPlans {
  /** Keep a new plan with its steps, in one transaction. */
  create(plan: Omit<BulkPlan, 'confirmation'>, steps: readonly BulkStep[]): Promise<void>;
  get(id: string): Promise<BulkPlan | undefined>;
  /** Set the plan's confirmation unless it has one: false when it had (the first answer stands). */
  confirm(id: string, confirmation: BulkConfirmation): Promise<boolean>;
  /** Hold the plan's run for `runner` until `untilMs` when no other runner holds it now; renewing is holding again. */
  hold(id: string, runner: string, untilMs: number, nowMs: number): Promise<boolean>;
  /** Let go of the run (only `runner`'s hold). */
  letGo(id: string, runner: string): Promise<void>;
  /** Steps by contact id from after `after`, at most `limit`; only of these statuses when given. */
  steps(id: string, o: { after?: number; limit: number; status?: readonly BulkStepStatus[] }): Promise<BulkStep[]>;
  /** Record a step's new status and note. */
  mark(id: string, step: BulkStep): Promise<void>;
  /** How many steps are in each status. */
  counts(id: string): Promise<Partial<Record<BulkStepStatus, number>>>;
}
