/**
 * The answers of sign-in's endpoints over node:http: JSON with the OAuth error shape (CORS-open:
 * browser-based clients call them), the consent and problem pages (no caching, framing, script
 * or referrer to other sites), redirects back to a client, and the bodies read within a bound.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuthErrorCode } from '@modelcontextprotocol/server';
import { readBody, TooLarge } from '../common/read-body.js';
import { problemPage } from './consent-page.js';
import type { Context } from './context.js';

/** RFC 8707's refusal of a resource: not among the SDK's codes. */
export const INVALID_TARGET = 'invalid_target';

/** An OAuth error code: the SDK's, or RFC 8707's; a misspelt one does not compile. */
type ErrorCode = OAuthErrorCode | typeof INVALID_TARGET;

export const CORS = { 'Access-Control-Allow-Origin': '*' };
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
const MAX_FORM_BYTES = 16 * 1024;

/** The answer to a CORS preflight of the JSON endpoints. */
export function preflight(res: ServerResponse): true {
  res.writeHead(204, {
    ...CORS,
    'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
    'Access-Control-Allow-Headers': 'Content-Type, Authorization, MCP-Protocol-Version',
    'Access-Control-Max-Age': '86400',
  });
  res.end();
  return true;
}

/** `text` as `type` (UTF-8) with `status` and `headers`. */
export function send(res: ServerResponse, status: number, type: string, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': `${type}; charset=utf-8`, ...headers });
  res.end(text);
}

/** An OAuth error answer (RFC 6749 §5.2): `{ error, error_description }`, never cached. */
export function oauthError(
  res: ServerResponse,
  status: number,
  error: ErrorCode,
  description: string,
  headers: Record<string, string> = {},
): void {
  send(res, status, 'application/json', JSON.stringify({ error, error_description: description }), { ...CORS, ...NO_STORE, ...headers });
}

/**
 * The consent and problem pages: no caching, no framing, no script, no referrer to other sites.
 * same-origin, not no-referrer: under no-referrer a browser sends the form's POST with
 * `Origin: null`, which the origin check refuses (every person clicking Allow saw "sent from
 * another site").
 */
export function sendPage(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  send(res, status, 'text/html', html, {
    ...NO_STORE,
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    ...headers,
  });
}

/** A page that says sign-in cannot go on, and why. */
export function cannotGoOn(res: ServerResponse, status: number, why: string, headers: Record<string, string> = {}): void {
  sendPage(res, status, problemPage('Sign-in cannot go on', why), headers);
}

/** A redirect to `to` with `params` added to its query, which is otherwise kept as registered. */
export function redirect(res: ServerResponse, to: string, params: Record<string, string>): void {
  const u = new URL(to);
  const added = new URLSearchParams(params).toString();
  u.search = u.search ? `${u.search}&${added}` : `?${added}`;
  res.writeHead(302, { Location: u.href, ...NO_STORE, 'Referrer-Policy': 'no-referrer' });
  res.end();
}

/** A body of at most 16 KiB as text; answers 413 itself (a page when `page`) and gives undefined past it. */
export async function body(req: IncomingMessage, res: ServerResponse, page = false): Promise<string | undefined> {
  try {
    return (await readBody(req, MAX_FORM_BYTES)).toString('utf8');
  } catch (e) {
    if (!(e instanceof TooLarge)) throw e;
    if (page) cannotGoOn(res, 413, 'The form is too large.', { Connection: 'close' });
    else oauthError(res, 413, OAuthErrorCode.InvalidRequest, `the body is over ${MAX_FORM_BYTES} bytes`, { Connection: 'close' });
    return undefined;
  }
}

/** Whether a request says it sends a web form. */
export function isForm(req: IncomingMessage): boolean {
  return /^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '');
}

/** The form of a token or revocation request; answers the refusal itself (not a form, too large) and gives undefined then. */
export async function formOf(req: IncomingMessage, res: ServerResponse): Promise<URLSearchParams | undefined> {
  if (!isForm(req)) {
    oauthError(res, 400, OAuthErrorCode.InvalidRequest, 'send the parameters as application/x-www-form-urlencoded');
    return undefined;
  }
  const raw = await body(req, res);
  return raw === undefined ? undefined : new URLSearchParams(raw);
}

/** The client_id of a token or revocation request: the form's, else an `Authorization: Basic` header's (any secret is ignored: clients here are public). */
export function clientIdOf(form: URLSearchParams, req: IncomingMessage): string | undefined {
  const given = form.get('client_id');
  if (given !== null) return given;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!m) return undefined;
  const id = Buffer.from(m[1]!, 'base64').toString('utf8').split(':')[0];
  try {
    return id ? decodeURIComponent(id.replace(/\+/g, ' ')) : undefined;
  } catch {
    return undefined;
  }
}

/** Two resource identifiers the same, a trailing slash aside. */
function sameResource(a: string, b: string): boolean {
  return a.replace(/\/$/, '') === b.replace(/\/$/, '');
}

/** The resource a request names (RFC 8707): the MCP endpoint (also when it names none) or its read-only door; undefined, any other. */
export function resourceNamed(ctx: Context, value: string | null): string | undefined {
  if (value === null) return ctx.resource;
  return [ctx.resource, ctx.door].find((r) => sameResource(value, r));
}
