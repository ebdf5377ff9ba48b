/**
 * A POST's JSON-RPC body, read once and strictly: over the size limit, not JSON, not valid UTF-8
 * (never replaced: a replaced byte could carry a call through), or nested deeper than
 * MAX_JSON_DEPTH, it is refused with the answer to send.
 */
import type { IncomingMessage } from 'node:http';
import { DEFAULT_MAX_REQUEST_BODY_SIZE, isJsonContentType } from '@modelcontextprotocol/server';
import { readBody, TooLarge } from '../../common/read-body.js';
import { refusal, type HttpAnswer } from '../auth/callers.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';

/** Refuses malformed UTF-8 instead of replacing it. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The body, parsed, or the refusal: over the size limit (413), not JSON (415), not valid UTF-8
 * or not JSON text (400, a JSON-RPC parse error), nested deeper than MAX_JSON_DEPTH (400, invalid request).
 */
export async function readJsonRpcBody(req: IncomingMessage): Promise<{ body: unknown; status?: never } | HttpAnswer> {
  if (!isJsonContentType(req.headers['content-type'])) return refusal(415, 'Unsupported Media Type: Content-Type must be application/json');
  let raw: Buffer;
  try {
    raw = await readBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE);
  } catch (e) {
    if (!(e instanceof TooLarge)) throw e;
    return refusal(413, `Payload too large: the body is over ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes`, { Connection: 'close' });
  }
  let text: string;
  try {
    text = STRICT_UTF8.decode(raw);
  } catch {
    return refusal(400, 'Parse error: the body is not valid UTF-8', {}, -32700);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refusal(400, 'Parse error: Invalid JSON', {}, -32700);
  }
  // Before anything recursive sees it (the SDK re-serialises the body: 5 000 levels overflowed the stack, a 500).
  if (nestsDeeperThan(body, MAX_JSON_DEPTH))
    return refusal(400, `Invalid Request: the body nests deeper than ${MAX_JSON_DEPTH} levels`, {}, -32600);
  return { body };
}
