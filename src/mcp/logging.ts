/**
 * Our log lines of a request go to its client too, as `notifications/message` (the `logging`
 * capability): what the process logs while a request's handler runs (the tool that failed,
 * the service's unexpected error, an export's start and end) is sent through that request's
 * context. The SDK filters by the client's level: `logging/setLevel` on a 2025 session, the
 * request's own log level on 2026-07-28 (none asked for, none sent). Lines still go to stderr
 * as before; stdout stays protocol only.
 *
 * Which request a line belongs to is said explicitly, not found by AsyncLocalStorage: on
 * Node 20 that turns on promise hooks for the whole process, a cost every promise of every
 * call pays (≈ 10 µs of a getMe tool call's server CPU over stdio). A line belongs to a
 * request when it is logged during the synchronous part of its handler, or inside
 * `logWithin(signal, …)` with the request's abort signal (its tools get it as `extra.signal`):
 * the backend calls of McpContext (for the built-in service, the whole call, answered
 * synchronously) and the MCP layer's own lines after an await.
 */
import type { LoggingLevel, ServerContext } from '@modelcontextprotocol/server';
import { REDACTED_KEYS, tapLog, type LogLevel } from '../common/log.js';

/** The `logger` name our notifications carry. */
const LOGGER = 'workspace-mcp';

const LEVELS: Record<LogLevel, LoggingLevel> = { debug: 'debug', info: 'info', warn: 'warning', error: 'error' };
const REDACTED = new Set(REDACTED_KEYS);

interface Sink {
  ctx: ServerContext;
  /** False once the handler returned: a line logged later (a timer it left) has no request to go to. */
  open: boolean;
  /** Lines on their way: the answer waits for them, so they reach the client before it. */
  sending: Set<Promise<void>>;
}

/** The open requests, by their abort signal (one a request, made by the SDK). */
const sinks = new WeakMap<AbortSignal, Sink>();
/** The request whose synchronous section runs now. */
let active: Sink | undefined;
let tapped = false;

/** A log line's fields as plain data: errors as name and message (no stack), keys redacted. */
function plain(v: unknown, depth = 0): unknown {
  if (v instanceof Error) return { name: v.name, message: v.message };
  if (v === null || typeof v !== 'object') return typeof v === 'bigint' ? String(v) : v;
  if (depth >= 4) return '[…]';
  if (Array.isArray(v)) return v.map((x) => plain(x, depth + 1));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, REDACTED.has(k) ? '[redacted]' : plain(x, depth + 1)]));
}

function forward(level: LogLevel, obj: object, msg: string | undefined): void {
  const sink = active;
  if (!sink?.open) return;
  const data = { ...(msg !== undefined ? { message: msg } : {}), ...(plain(obj) as object) };
  const sent = sink.ctx.mcpReq.log(LEVELS[level], data, LOGGER).catch(() => undefined);
  sink.sending.add(sent);
  void sent.then(() => sink.sending.delete(sent));
}

/**
 * `fn()` with the lines it logs synchronously sent to the client of the request `signal` is
 * of (none when it is of no open request): an async `fn` counts up to its first await.
 */
export function logWithin<T>(signal: AbortSignal | undefined, fn: () => T): T {
  const sink = signal && sinks.get(signal);
  if (!sink) return fn();
  const before = active;
  active = sink;
  try {
    return fn();
  } finally {
    active = before;
  }
}

/**
 * A signal that is never aborted but logs to the same request as `signal`: for work that must
 * finish once begun even when the request is cancelled (a bulk step under way).
 */
export function uncancellable(signal: AbortSignal): AbortSignal {
  const own = new AbortController().signal;
  const sink = sinks.get(signal);
  if (sink) sinks.set(own, sink);
  return own;
}

/** Run a request's handler with the lines logged meanwhile (see above) sent to its client. */
export async function withRequestLog<T>(ctx: ServerContext, run: () => Promise<T>): Promise<T> {
  if (!tapped) {
    tapped = true;
    tapLog(forward);
  }
  const sink: Sink = { ctx, open: true, sending: new Set() };
  const signal = ctx.mcpReq.signal;
  sinks.set(signal, sink);
  try {
    return await logWithin(signal, run);
  } finally {
    sink.open = false;
    sinks.delete(signal);
    if (sink.sending.size > 0) await Promise.all(sink.sending);
  }
}
