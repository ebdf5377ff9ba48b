/** The process logger: JSON lines on stderr (stdout may be the MCP channel). Never given keys. */
import { pino } from 'pino';

export const log = pino(
  {
    level: process.env.WORKSPACE_LOG_LEVEL ?? 'info',
    redact: { paths: ['api_key', 'apiKey', 'key', 'authorization', 'api_token', '*.api_token', '*.authorization'], censor: '[redacted]' },
  },
  pino.destination(2),
);
