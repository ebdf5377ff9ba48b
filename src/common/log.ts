/**
 * The process logger, a neutral module every layer may use (it imports nothing of ours): JSON
 * lines on stderr (stdout may be the MCP channel). Never given keys. pino is loaded on the
 * first line logged at or above $WORKSPACE_LOG_LEVEL (info), not at start-up: most runs log
 * nothing, and the MCP server's cold start is measured. A tap (the MCP server's) may also see
 * every line, whatever that level, to hand a request's lines to its client.
 */
import { createRequire } from 'node:module';
import type { Logger as Pino } from 'pino';

/** What a part that logs needs: the service and the HTTP server take one (tests pass none). */
export interface Logger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Sees every line logged (see `tapLog`). */
export type LogTap = (level: LogLevel, obj: object, msg: string | undefined) => void;

/** Keys whose values never leave the process in a log line, on stderr or to a tap. */
export const REDACTED_KEYS = ['api_key', 'apiKey', 'key', 'authorization', 'api_token'];

const SEVERITY: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

let real: Pino | undefined;
let dest: { flushSync(): void } | undefined;
let threshold: number | undefined;
let tap: LogTap | undefined;

function pinoLogger(): Pino {
  if (!real) {
    const { pino } = createRequire(import.meta.url)('pino') as typeof import('pino');
    const stream = pino.destination(2);
    dest = stream;
    real = pino(
      {
        level: process.env.WORKSPACE_LOG_LEVEL ?? 'info',
        redact: { paths: [...REDACTED_KEYS, '*.api_token', '*.authorization'], censor: '[redacted]' },
      },
      stream,
    );
  }
  return real;
}

function write(level: LogLevel, obj: object, msg?: string): void {
  threshold ??= SEVERITY[process.env.WORKSPACE_LOG_LEVEL ?? 'info'] ?? SEVERITY.info!;
  if (SEVERITY[level]! >= threshold) pinoLogger()[level](obj, msg);
  tap?.(level, obj, msg);
}

/**
 * Write out what is still buffered, now: before a worker thread's process.exit, which (unlike the
 * main thread's) does not wait for the logger's asynchronous writes.
 */
export function flushLog(): void {
  try {
    dest?.flushSync();
  } catch {
    /* nothing buffered, or stderr closed: nothing to do */
  }
}

/** Hand every line to `fn` as well (one tap a process; `undefined` removes it). */
export function tapLog(fn: LogTap | undefined): void {
  tap = fn;
}

export const log = {
  debug: (obj: object, msg?: string) => write('debug', obj, msg),
  info: (obj: object, msg?: string) => write('info', obj, msg),
  warn: (obj: object, msg?: string) => write('warn', obj, msg),
  error: (obj: object, msg?: string) => write('error', obj, msg),
};
