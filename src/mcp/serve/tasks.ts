/**
 * MCP tasks (protocol revision 2025-11-25): a `tools/call` that carries `task` on a tool that
 * supports it (runBulk) answers at once with the task, and the work goes on behind it; the
 * client polls `tasks/get`, waits on `tasks/result`, lists its tasks and cancels one. The
 * 2026-07-28 revision took tasks out of the core protocol (the SDK drops `execution` and
 * `capabilities.tasks` from that era's answers): there the tool answers as it always does.
 *
 * Tasks live in memory, per wiring (one owner's, when each person is served as themselves),
 * for their time to live (1 hour unless asked for less, at most 24 hours; a task still working is
 * kept until it ends, so it can be seen and cancelled), at most 100 at once.
 * A task id is 122 random bits. What a task does is durable by itself (a bulk plan's steps are
 * recorded as they run), so a task lost with the process loses only its handle.
 */
import { randomUUID } from 'node:crypto';
import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';

type Status = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A task as the protocol shows it. */
export type TaskView = {
  taskId: string;
  status: Status;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number;
  pollInterval: number;
};

interface Held {
  view: TaskView;
  abort: AbortController;
  /** Resolves once the work ended (never rejects). */
  done: Promise<void>;
  result?: CallToolResult;
  expires: number;
}

const RELATED = 'io.modelcontextprotocol/related-task';
const TERMINAL: ReadonlySet<Status> = new Set(['completed', 'failed', 'cancelled']);
const DEFAULT_TTL_MS = 60 * 60_000;
const MAX_TTL_MS = 24 * 60 * 60_000;
const MIN_TTL_MS = 60_000;
const POLL_MS = 5_000;
const PAGE = 50;

/** The work of a task: its result; `signal` aborts on tasks/cancel; `say` sets the status message. */
export type TaskWork = (signal: AbortSignal, say: (message: string) => void) => Promise<CallToolResult>;

const notFound = () => new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found (or expired)');

export class Tasks {
  private readonly held = new Map<string, Held>();

  constructor(private readonly max = 100) {}

  /** Forgets ended tasks past their time to live; a working one is kept until it ends (so it can still be seen and cancelled). */
  private sweep(now = Date.now()): void {
    for (const [id, t] of this.held) if (t.expires <= now && TERMINAL.has(t.view.status)) this.held.delete(id);
  }

  private touch(t: Held, change: Partial<TaskView>): void {
    if (TERMINAL.has(t.view.status)) return;
    Object.assign(t.view, change, { lastUpdatedAt: new Date().toISOString() });
    // A task that ends past its time to live (kept while it worked) is kept a minute more for its result.
    if (TERMINAL.has(t.view.status)) t.expires = Math.max(t.expires, Date.now() + MIN_TTL_MS);
  }

  /** A new task doing `work` (or, given `result`, one that already ended with it). */
  start(ttl: number | undefined, work: TaskWork | { result: CallToolResult }): TaskView {
    this.sweep();
    if (this.held.size >= this.max) {
      // Make room from the ended ones, oldest first; a server busy with `max` tasks takes no more.
      for (const [id, t] of this.held) if (TERMINAL.has(t.view.status) && this.held.size >= this.max) this.held.delete(id);
      if (this.held.size >= this.max)
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `${this.max} tasks are running on this server; call again without a task, or later`,
        );
    }
    const keep = Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, ttl ?? DEFAULT_TTL_MS));
    const now = new Date().toISOString();
    const view: TaskView = {
      taskId: randomUUID(),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttl: keep,
      pollInterval: POLL_MS,
    };
    const abort = new AbortController();
    const t: Held = { view, abort, done: Promise.resolve(), expires: Date.now() + keep };
    const end = (result: CallToolResult) => {
      t.result = result;
      this.touch(t, {
        status: result.isError ? 'failed' : 'completed',
        statusMessage: result.isError ? 'The call failed: see its result.' : 'Done.',
      });
    };
    // Every task begins working (the spec's lifecycle), even one whose answer is already known.
    const begun = { ...view };
    if ('result' in work) end(work.result);
    else
      // A failure is the task's (failed; the work logs it): nobody may be waiting on `done`, and a
      // rejection none handles would end the process.
      t.done = work(abort.signal, (statusMessage) => this.touch(t, { statusMessage })).then(end, () =>
        end({ isError: true, content: [{ type: 'text', text: JSON.stringify({ message: 'Server Error' }) }] }),
      );
    this.held.set(view.taskId, t);
    return begun;
  }

  private find(id: unknown): Held {
    this.sweep();
    const t = typeof id === 'string' ? this.held.get(id) : undefined;
    if (!t) throw notFound();
    return t;
  }

  get(id: unknown): TaskView {
    return { ...this.find(id).view };
  }

  /** The tool's result once the task ended (tasks/result waits for it), tied to its task. */
  async result(id: unknown): Promise<CallToolResult> {
    const t = this.find(id);
    await t.done;
    const r = t.result ?? { isError: true, content: [{ type: 'text', text: JSON.stringify({ message: 'The task was cancelled.' }) }] };
    return { ...r, _meta: { ...r._meta, [RELATED]: { taskId: t.view.taskId } } };
  }

  list(cursor: unknown): { tasks: TaskView[]; nextCursor?: string } {
    this.sweep();
    const all = [...this.held.values()].map((t) => ({ ...t.view }));
    const from = cursor === undefined ? 0 : all.findIndex((t) => t.taskId === cursor) + 1;
    if (cursor !== undefined && from === 0)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: call tasks/list without one');
    const page = all.slice(from, from + PAGE);
    return { tasks: page, ...(from + PAGE < all.length ? { nextCursor: page.at(-1)!.taskId } : {}) };
  }

  /** Stops the task (between its steps) and marks it cancelled at once; an ended task cannot be. */
  cancel(id: unknown): TaskView {
    const t = this.find(id);
    if (TERMINAL.has(t.view.status)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `The task already ended (${t.view.status})`);
    this.touch(t, { status: 'cancelled', statusMessage: 'The task was cancelled by request.' });
    t.abort.abort(new Error('task cancelled'));
    return { ...t.view };
  }
}
