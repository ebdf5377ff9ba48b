/**
 * What every MCP session of one process shares: the backend (known only by its interface, so
 * the built-in service and a remote API look the same here), the MCP layer's own state that
 * the CLI passes in (idempotency keys), the folder exports are written to, the result budget,
 * who hears that the set of lists changed, the contact search and workspace directory the CLI
 * passed in, the default bot, the ids seen in answers, and the seal of questions asked of the user.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { isSuccess, type ApiResponse, type Backend, type CallOptions } from '../api/backend.js';
import { findMethod, type MethodName } from '../api/catalog.js';
import { ApiError, outcomeUnknown } from '../api/errors.js';
import { AccountBook, type AccountView } from './money/accounts.js';
import { QuestionSeal } from './money/elicit.js';
import { RESULT_BUDGET } from './result/budget.js';
import { logWithin } from './logging.js';
import { toolResult } from './result/results.js';
import type { ContactIndex } from './contact-search.js';
import { contactsIn, SeenIds } from './seen.js';
import type { MoneyPolicy } from './money/caps.js';
import type { AccountHolders, AuditTrail, BulkPlans, IdempotencyKeys, MoneyWindow, WorkspaceDirectory } from './state.js';

/**
 * How long one runBulk call goes on before it answers with the plan's progress: within the minute
 * many clients give a tool call, so a long plan (a remote API's pace: 2 500 steps take about 42
 * minutes) is carried out over several calls, each going on where the last stopped.
 */
const BULK_CALL_MS = 45_000;

export interface McpContextOptions {
  backend: Backend;
  /** The money tools' idempotency keys, of the owner (or key) this server acts for. */
  keys: IdempotencyKeys;
  /** Folder exports are written into (its `exports/` subfolder). */
  dataDir: string;
  /** The owner the backend acts as, when start-up learnt it (else asked of getMe once, when needed). */
  ownerId?: number;
  /** Contact search (findContacts, completions). */
  contacts?: ContactIndex;
  /** What the owner may see (getWorkspace, completions). */
  directory?: WorkspaceDirectory;
  /** The configured default bot (`--bot`). */
  defaultBotId?: number;
  /** Where ids seen in answers are kept (shared with a remote directory). */
  seen?: SeenIds;
  /** The audit trail of data-changing calls (the local backend also writes it itself, with each change). */
  audit?: AuditTrail;
  /** The money caps and the window they count in (no caps when absent). */
  money?: { policy: MoneyPolicy; window: MoneyWindow };
  /** The bulk plans of the owner (or key) this server acts for (previewBulk and runBulk are served with them). */
  plans?: BulkPlans;
  /** How long one runBulk call carries a plan out before it answers with the plan's progress (BULK_CALL_MS by default). */
  bulkCallMs?: number;
  /**
   * Who holds an account, when no answer showed it (behind a balancer another instance may
   * have): asked before the money path refuses an account it has not seen.
   */
  accountHolder?: (accountId: number) => Promise<number | undefined>;
  /** Which contact holds which account, as answers showed it, kept in the server's state across processes. */
  holders?: AccountHolders;
  /** The key questions to the user are sealed with (32 bytes or more); random by default. */
  questionKey?: Uint8Array;
  /** The result budget: most characters of a tool result or a resource read (RESULT_BUDGET by default). */
  maxResultChars?: number;
  /** MCP Apps views (apps.ts); on unless `--no-ui`. */
  ui?: boolean;
  /**
   * Whether answers may name files by their path on this machine (an export's `file`): yes over
   * stdio, where the person is on it; over HTTP only the file's name (the path is the server's).
   */
  localPaths?: boolean;
  /** A start-up fact the model must see (the database was created empty): in warnings, see `startNotes`. */
  startNote?: string;
  /**
   * MCP tasks (2025-11-25): work that goes on after its request answered. Off for `--auth key`
   * and `--auth oauth`: on `--remote` the API key lives only as long as its request, so such work
   * would have none (on `--db`, off alike, so that both backends behave the same).
   */
  tasks?: boolean;
}

/**
 * The process's drain (SIGTERM or SIGINT on `mcp --http`, cli/mcp-http.ts), every context's: once
 * begun, a bulk run stops between its steps and answers its progress (runBulk again, on any
 * instance, goes on); `begin` resolves once no run is in a step (a task's run has no request
 * the HTTP server could wait for).
 */
class Draining {
  private readonly aborts = new AbortController();
  private running = 0;
  private idle: (() => void) | undefined;

  get signal(): AbortSignal {
    return this.aborts.signal;
  }

  /** A run under way until the function returned is called. */
  hold(): () => void {
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.running === 0) this.idle?.();
    };
  }

  begin(): Promise<void> {
    this.aborts.abort();
    return this.running === 0 ? Promise.resolve() : new Promise((done) => (this.idle = done));
  }
}

export const DRAINING = new Draining();

export class McpContext {
  readonly backend: Backend;
  readonly keys: IdempotencyKeys;
  readonly dataDir: string;
  readonly contacts?: ContactIndex;
  readonly directory?: WorkspaceDirectory;
  readonly audit?: AuditTrail;
  readonly money?: { policy: MoneyPolicy; window: MoneyWindow };
  readonly plans?: BulkPlans;
  readonly bulkCallMs: number;
  /** The process's drain: a bulk run stops between its steps once it begins. */
  readonly draining: Draining = DRAINING;
  /** Ids seen in the API's answers. */
  readonly seen: SeenIds;
  /** Which contact holds which account, as answers showed it (the money path reads accounts back). */
  readonly accounts: AccountBook;
  /** Seals and reads the state of questions asked from tool calls (elicitation). */
  readonly questions: QuestionSeal;
  /** Serve the MCP Apps views (`--no-ui` turns them off). */
  readonly ui: boolean;
  readonly localPaths: boolean;
  readonly tasks: boolean;
  private readonly defaultBotId?: number;
  private readonly accountHolder?: (accountId: number) => Promise<number | undefined>;
  private ownerId: number | undefined;
  readonly maxResultChars: number;
  private readonly listeners = new Set<() => void>();
  private startNote?: string;
  private startNoteGiven = false;

  constructor(opts: McpContextOptions) {
    this.backend = opts.backend;
    this.keys = opts.keys;
    this.dataDir = opts.dataDir;
    this.ownerId = opts.ownerId;
    this.contacts = opts.contacts;
    this.directory = opts.directory;
    this.defaultBotId = opts.defaultBotId;
    this.accountHolder = opts.accountHolder;
    this.accounts = new AccountBook(opts.holders);
    this.seen = opts.seen ?? new SeenIds();
    this.audit = opts.audit;
    this.money = opts.money;
    this.plans = opts.plans;
    this.bulkCallMs = opts.bulkCallMs ?? BULK_CALL_MS;
    this.questions = new QuestionSeal(opts.questionKey);
    this.maxResultChars = opts.maxResultChars ?? RESULT_BUDGET;
    this.ui = opts.ui ?? true;
    this.localPaths = opts.localPaths ?? true;
    this.tasks = opts.tasks ?? true;
    this.startNote = opts.startNote;
  }

  /** The start-up note for a result's warnings: on every getWorkspace answer, and on the first result of any other tool. */
  startNotes(tool: string): string[] {
    if (this.startNote === undefined || (this.startNoteGiven && tool !== 'getWorkspace')) return [];
    this.startNoteGiven = true;
    return [this.startNote];
  }

  /** The owner the backend acts as, when known without asking. */
  get knownOwner(): number | undefined {
    return this.ownerId;
  }

  /**
   * Call the backend. A backend answers failures too; one that throws all the same (a bug, or
   * a wrapper of one) answers `upstream_unreachable` for a read, so a tool never fails without
   * a result; a write `outcome_unknown` (the change, or the money, may be made before the throw).
   */
  async call(method: MethodName, params: Record<string, unknown>, opts?: CallOptions): Promise<ApiResponse> {
    try {
      // The built-in service answers synchronously: what it logs is the request's (logging.ts).
      return await logWithin(opts?.signal, () => this.backend.call(method, params, opts));
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      const def = findMethod(method);
      // A write that threw may have been made before the throw (a move too): saying "unreachable" would invite a blind retry.
      if (def && !def.annotations.readOnlyHint) return outcomeUnknown(method, def, why).response();
      return new ApiError('upstream_unreachable', `The Workspace API could not be reached: ${why}`).response();
    }
  }

  /**
   * The id of the owner the backend acts as: as start-up learnt it, else asked of getMe once
   * (search and the directory need it; money calls never do); or the error result.
   */
  async owner(): Promise<number | CallToolResult> {
    if (this.ownerId !== undefined) return this.ownerId;
    const res = await this.call('getMe', {});
    if (!isSuccess(res.status)) return toolResult(res, { method: 'getMe' });
    const id = (res.body as { data?: { id?: unknown } } | undefined)?.data?.id;
    if (typeof id !== 'number') return toolResult(new ApiError('server_error', 'getMe answered no owner id.').response());
    this.ownerId = id;
    return id;
  }

  /**
   * Learn from a successful answer: ids for getWorkspace, contacts for a synced search index.
   * Done at once, unless contacts are to be told to the index (a promise then): most answers
   * need no await.
   */
  noteAnswer(body: unknown): Promise<void> | undefined {
    this.seen.record(body);
    const found = this.contacts?.observe ? contactsIn(body) : [];
    if (found.length === 0) return undefined;
    return this.owner().then((owner) => {
      if (typeof owner === 'number') this.contacts!.observe!(owner, found);
    });
  }

  /**
   * An account read live, through getContactAccounts of the contact an earlier answer showed
   * holding it; undefined when no answer did (or it is gone).
   */
  async account(accountId: number, signal?: AbortSignal): Promise<AccountView | undefined> {
    // The API's getContactAccounts below still checks that the contact is the owner's.
    const contactId = (await this.accounts.holder(accountId)) ?? (await this.accountHolder?.(accountId));
    if (contactId === undefined) return undefined;
    const res = await this.call('getContactAccounts', { contact_id: contactId }, { signal });
    if (!isSuccess(res.status)) return undefined;
    const data = (res.body as { data?: Array<{ id: number; currency: string; amount: number; blocked_at: string | null }> }).data ?? [];
    const a = data.find((x) => x.id === accountId);
    if (!a) return undefined;
    return {
      id: a.id,
      contactId,
      contactName: this.accounts.name(contactId),
      currency: a.currency,
      amount: a.amount,
      blocked: a.blocked_at !== null,
    };
  }

  /**
   * A contact's name: as an answer showed it, else looked up by id in the contact search (as
   * the index holds it now, without waiting for a sync); null when neither knows it.
   */
  async contactName(contactId: number, signal?: AbortSignal): Promise<string | null> {
    const known = this.accounts.name(contactId);
    if (known !== null || !this.contacts) return known;
    const owner = await this.owner();
    if (typeof owner !== 'number') return null;
    try {
      const { hits } = await this.contacts.find(owner, String(contactId), { limit: 5, wait: false, signal });
      return hits.find((h) => h.id === contactId)?.name ?? null;
    } catch {
      return null; // the question then names the contact by id
    }
  }

  /** The bot a tool uses when bot_id is left out: the configured one, else the owner's only bot. */
  async defaultBot(): Promise<number | undefined> {
    if (this.defaultBotId !== undefined) return this.defaultBotId;
    const owner = await this.owner();
    return typeof owner === 'number' ? this.directory?.onlyBot(owner) : undefined;
  }

  /** Be told when a tool created or deleted a list; returns the unsubscribe function. */
  onListsChanged(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  listsChanged(): void {
    for (const fn of this.listeners) fn();
  }
}
