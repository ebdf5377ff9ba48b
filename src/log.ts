/**
 * The process logger, a neutral module every layer may use (it imports nothing of ours): JSON
 * lines on stderr (stdout may be the MCP channel). Never given keys. pino is loaded on the
 * first line logged, not at start-up: most runs log nothing, and the MCP server's cold start
 * is measured.
 */
import { createRequire } from 'node:module';
import type { Logger as Pino } from 'pino';

/** What a part that logs needs: the service and the HTTP server take one (tests pass none). */
export interface Logger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

let real: Pino | undefined;

function pinoLogger(): Pino {
  if (!real) {
    const { pino } = createRequire(import.meta.url)('pino') as typeof import('pino');
    real = pino(
      {
        level: process.env.WORKSPACE_LOG_LEVEL ?? 'info',
        redact: { paths: ['api_key', 'apiKey', 'key', 'authorization', 'api_token', '*.api_token', '*.authorization'], censor: '[redacted]' },
      },
      pino.destination(2),
    );
  }
  return real;
}

export const log = {
  info: (obj: object, msg?: string) => pinoLogger().info(obj, msg),
  warn: (obj: object, msg?: string) => pinoLogger().warn(obj, msg),
  error: (obj: object, msg?: string) => pinoLogger().error(obj, msg),
};
