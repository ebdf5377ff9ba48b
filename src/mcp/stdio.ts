/**
 * The stdio transport, writing tool results' structuredContent in the API's key order: the
 * SDK serialises with JSON.stringify, which moves keys such as "10" before "b" (a list's
 * fields by slug). Everything else is the SDK's own transport.
 */
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { orderedTextOf } from './results.js';

const TOKEN = `\u0000structured-${randomBytes(6).toString('hex')}`;

/** The line the transport writes for `message`, structuredContent in its ordered text. */
export function serializeOrdered(message: JSONRPCMessage): string {
  const result = (message as { result?: { structuredContent?: unknown } }).result;
  const sc = result?.structuredContent;
  const ordered = sc && typeof sc === 'object' ? orderedTextOf(sc) : undefined;
  if (!ordered) return JSON.stringify(message) + '\n';
  const json = JSON.stringify({ ...message, result: { ...result, structuredContent: TOKEN } });
  return json.replace(JSON.stringify(TOKEN), () => ordered) + '\n';
}

export class OrderedStdioServerTransport extends StdioServerTransport {
  constructor(
    stdin: Readable = process.stdin,
    private readonly out: Writable = process.stdout,
  ) {
    super(stdin, out);
  }

  override send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.out.write(serializeOrdered(message))) resolve();
      else this.out.once('drain', resolve);
    });
  }
}
