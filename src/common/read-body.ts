/**
 * Reading a request's whole body with a size limit, for both HTTP servers (the service's and
 * the MCP server's). A neutral module: it imports nothing of ours and any layer may use it.
 */
import type { IncomingMessage } from 'node:http';

/** A body past the limit; the caller answers 413. */
export class TooLarge extends Error {}

/** The whole body of `req`, refused with TooLarge past `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) {
        reject(new TooLarge());
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
