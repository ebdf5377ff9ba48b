/**
 * What every MCP session of one process shares: the backend, the idempotency keys, the folder
 * exports are written to, who hears that the set of lists changed, the contact search and the
 * workspace directory the CLI passed in, the default bot and the ids seen in answers. The MCP
 * layer knows the backend only through its interface, so the local service and a remote API
 * look the same here.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isSuccess } from '../api/backend.js';
import { fail } from '../api/errors.js';
import type { Backend } from '../api/backend.js';
import type { IdempotencyStore } from '../store/idempotency.js';
import type { WorkspaceDirectory } from './directory.js';
import type { ContactIndex } from './search.js';
import { contactsIn, SeenIds } from './seen.js';
import { apiErrorResult, errorResult, isUnreachable, responseWarnings, successResult, unreachableResult } from './results.js';

export interface WorkspaceOptions {
  backend: Backend;
  /** Where idempotency keys are kept: the service's database, or a local file for a remote backend. */
  keys: IdempotencyStore;
  /** Folder exports are written into (its `exports/` subfolder). */
  dataDir: string;
  /** Contact search (findContacts, completions). */
  contacts?: ContactIndex;
  /** What the owner may see (getWorkspace, completions). */
  directory?: WorkspaceDirectory;
  /** The configured default bot (`--bot`). */
  defaultBotId?: number;
  /** Where ids seen in answers are kept (shared with a remote directory). */
  seen?: SeenIds;
}

/**
 * Whether an error result leaves open whether money moved: a 5xx, or the remote client's
 * `outcome_unknown` (a lost answer). Only a 4xx is a definite "nothing happened".
 */
function outcomeUnknown(text: string | undefined): boolean {
  if (text === undefined) return true;
  try {
    const body = JSON.parse(text) as { status?: unknown; code?: unknown };
    return typeof body.status !== 'number' || body.status >= 500 || body.code === 'outcome_unknown';
  } catch {
    return true;
  }
}

export class Workspace {
  readonly backend: Backend;
  readonly dataDir: string;
  readonly contacts?: ContactIndex;
  readonly directory?: WorkspaceDirectory;
  /** Ids seen in the API's answers. */
  readonly seen: SeenIds;
  private readonly defaultBotId?: number;
  private readonly keys: IdempotencyStore;
  private readonly listeners = new Set<() => void>();
  private ownerId: number | undefined;

  constructor(opts: WorkspaceOptions) {
    this.backend = opts.backend;
    this.keys = opts.keys;
    this.dataDir = opts.dataDir;
    this.contacts = opts.contacts;
    this.directory = opts.directory;
    this.defaultBotId = opts.defaultBotId;
    this.seen = opts.seen ?? new SeenIds();
  }

  /** Learn from a successful answer: ids for getWorkspace, contacts for a synced search index. */
  async noteAnswer(body: unknown): Promise<void> {
    this.seen.record(body);
    const found = this.contacts?.observe ? contactsIn(body) : [];
    if (found.length === 0) return;
    const owner = await this.owner();
    if (typeof owner === 'number') this.contacts!.observe!(owner, found);
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

  /** The id of the owner the backend acts as (getMe), asked once; or the error result. */
  async owner(): Promise<number | CallToolResult> {
    if (this.ownerId !== undefined) return this.ownerId;
    let res;
    try {
      res = await this.backend.call('getMe', {});
    } catch (e) {
      return unreachableResult(e);
    }
    if (!isSuccess(res.status)) return errorResult(res.status, res.body, responseWarnings('getMe', res));
    const id = (res.body as { data?: { id?: unknown } } | undefined)?.data?.id;
    if (typeof id !== 'number') return errorResult(500, { message: 'getMe answered no owner id.' });
    this.ownerId = id;
    return id;
  }

  /**
   * Run a money call at most once per idempotency key: the first success is kept and replayed
   * (with `replayed: true`) to a repeat with the same arguments; other arguments are an error.
   * A failed call moved nothing, so its key is given back. A call that threw (the remote API
   * could not be reached) keeps its reservation: whether money moved is unknown.
   */
  async once(method: string, key: string, hash: string, call: () => Promise<CallToolResult>): Promise<CallToolResult> {
    const owner = await this.owner();
    if (typeof owner !== 'number') return owner;
    const seen = this.keys.reserve(owner, key, method, hash);
    if (seen) {
      if (seen.method !== method || seen.params_hash !== hash) {
        return apiErrorResult(
          fail.coded(
            'idempotency_conflict',
            'idempotency_key',
            `This idempotency key was already used for another operation (${seen.method} with other arguments). Use a new key for a new operation.`,
          ),
        );
      }
      if (seen.status === 0) {
        return apiErrorResult(
          fail.coded(
            'idempotency_conflict',
            'idempotency_key',
            'An operation with this idempotency key is under way, or its outcome is unknown. Check the balance with getContactAccounts before retrying with a new key.',
          ),
        );
      }
      return successResult(seen.body, { replayed: true });
    }
    let result: CallToolResult;
    try {
      result = await call();
    } catch (e) {
      return unreachableResult(e);
    }
    const text = result.content[0]?.type === 'text' ? result.content[0].text : undefined;
    if (!result.isError && text !== undefined) this.keys.complete(owner, key, 200, text);
    else if (!isUnreachable(result) && !outcomeUnknown(text)) this.keys.release(owner, key);
    return result;
  }
}
