/**
 * Our log lines of a request go to its client too, as `notifications/message` (the `logging`
 * capability): whatever the process logs while a request's handler runs (the tool that
 * failed, the service's unexpected error, an export's start and end) is sent through that
 * request's context. The SDK filters by the client's level: `logging/setLevel` on a 2025
 * session, the request's own log level on 2026-07-28 (none asked for, none sent). Lines still
 * go to stderr as before; stdout stays protocol only.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggingLevel, ServerContext } from '@modelcontextprotocol/server';
import { REDACTED_KEYS, tapLog, type LogLevel } from '../log.js';

/** The `logger` name our notifications carry. */
export const LOGGER = 'workspace-mcp';

const LEVELS: Record<LogLevel, LoggingLevel> = { debug: 'debug', info: 'info', warn: 'warning', error: 'error' };
const REDACTED = new Set(REDACTED_KEYS);

interface Sink {
  ctx: ServerContext;
  /** False once the handler returned: a line logged later (a timer it left) has no request to go to. */
  open: boolean;
  /** Lines on their way: the answer waits for them, so they reach the client before it. */
  sending: Set<Promise<void>>;
}

const current = new AsyncLocalStorage<Sink>();
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
  const sink = current.getStore();
  if (!sink?.open) return;
  const data = { ...(msg !== undefined ? { message: msg } : {}), ...(plain(obj) as object) };
  const sent = sink.ctx.mcpReq.log(LEVELS[level], data, LOGGER).catch(() => undefined);
  sink.sending.add(sent);
  void sent.then(() => sink.sending.delete(sent));
}

/** Run a request's handler with the lines logged meanwhile sent to its client. */
export async function withRequestLog<T>(ctx: ServerContext, run: () => Promise<T>): Promise<T> {
  if (!tapped) {
    tapped = true;
    tapLog(forward);
  }
  const sink: Sink = { ctx, open: true, sending: new Set() };
  try {
    return await current.run(sink, run);
  } finally {
    sink.open = false;
    if (sink.sending.size > 0) await Promise.all(sink.sending);
  }
}
