/**
 * The service over node:http: `/api/v1/<methodName>`, GET params from the query, POST params
 * from a JSON body or form fields (bracket notation in both), answers written as JSON.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import qs from 'qs';
import type { ApiResponse } from '../api/backend.js';
import { ApiError } from '../api/errors.js';
import { bindFirst, Drain, type Bound } from '../common/drain.js';
import { apiRequestStarted } from '../common/telemetry.js';
import type { Logger } from '../common/log.js';
import { readBody, TooLarge } from '../common/read-body.js';
import { arrived, type ApiRequest } from '../service/pipeline.js';
import { jsonText } from '../service/rendered.js';

/** Largest body accepted; past it, 413. */
const MAX_BODY_BYTES = 1024 * 1024;

export const QS_OPTIONS: qs.IParseOptions = {
  depth: 10,
  // Every index becomes a map key; listify turns 0, 1, 2 … maps back into lists.
  arrayLimit: -1,
  parameterLimit: 10_000,
  allowPrototypes: false,
  // `count=1&count=2`: the last one wins, as PHP reads a repeated parameter.
  duplicates: 'last',
};

/**
 * Bracket parameters the way PHP reads them: every `a[k]` is a map key, and a map whose keys
 * are 0, 1, 2 … in order is a list. So `fields[0][name]` is a list of fields while
 * `data[10]=x` stays a map with the key "10" (qs's own array building would lose it).
 */
function listify(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(listify);
  if (v === null || typeof v !== 'object') return v;
  const entries = Object.entries(v as Record<string, unknown>);
  const isList = entries.length > 0 && entries.every(([k], i) => k === String(i));
  if (isList) return entries.map(([, x]) => listify(x));
  const out: Record<string, unknown> = {};
  for (const [k, x] of entries) out[k] = listify(x);
  return out;
}

/** Parse a query string or form body with bracket notation. */
export function parseParams(text: string): Record<string, unknown> {
  const flat = parseFlat(text);
  // Plain pairs are already what listify makes of them, unless the keys start at "0" (a list).
  if (flat && !Object.hasOwn(flat, '0')) return flat;
  return listify(flat ?? qs.parse(text, QS_OPTIONS)) as Record<string, unknown>;
}

/** Characters after which only qs knows the answer: brackets and escapes. */
const NOT_FLAT = /[[\]%+]/;

/**
 * What qs makes of a query of plain `name=value` pairs (no brackets, no escapes, the most
 * common query by far), without qs: the first `=` splits, a repeated name keeps the last value
 * in the first one's place, an empty name and the names of Object.prototype are dropped.
 * Undefined for anything else, which qs parses.
 */
function parseFlat(text: string): Record<string, unknown> | undefined {
  if (NOT_FLAT.test(text)) return undefined;
  const parts = text.split('&');
  if (parts.length > QS_OPTIONS.parameterLimit!) return undefined;
  const out: Record<string, unknown> = {};
  for (const part of parts) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    if (key === '' || key in Object.prototype) continue;
    out[key] = eq < 0 ? '' : part.slice(eq + 1);
  }
  return out;
}

/** Laravel's `expectsJson`: the first accepted type is JSON, or an XHR that accepts anything. */
function wantsJson(accept: string | undefined, requestedWith: string | undefined): boolean {
  if (accept === 'application/json') return true;
  const first = (accept ?? '').split(',')[0]?.trim().toLowerCase() ?? '';
  if (first.includes('/json') || first.includes('+json')) return true;
  const anyType = accept === undefined || accept === '' || /(^|,)\s*\*\/\*/.test(accept);
  return requestedWith === 'XMLHttpRequest' && anyType;
}

const BEARER = /^Bearer\s+/i;

/** Refuses malformed UTF-8 instead of replacing it; keeps a BOM, which JSON.parse refuses as PHP does. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

async function parseBody(contentType: string, raw: Buffer): Promise<{ input: Record<string, unknown>; note?: string }> {
  if (raw.length === 0) return { input: {} };
  const type = contentType.toLowerCase();
  if (type.includes('json')) {
    let text: string;
    try {
      text = STRICT_UTF8.decode(raw);
    } catch {
      // PHP's json_decode refuses malformed UTF-8, so Laravel sees no input at all; reading
      // the bytes with replacement characters would let a call through the real service refuses.
      return { input: {}, note: 'The request body is not valid UTF-8.' };
    }
    try {
      const v: unknown = JSON.parse(text);
      if (v && typeof v === 'object' && !Array.isArray(v)) return { input: v as Record<string, unknown> };
      return { input: {}, note: 'The request body must be a JSON object.' };
    } catch {
      return { input: {}, note: 'The request body is not valid JSON.' };
    }
  }
  if (type.includes('application/x-www-form-urlencoded')) return { input: parseParams(raw.toString('utf8')) };
  if (type.startsWith('multipart/form-data')) {
    // Form fields of a multipart body, read by the platform's own parser (files are ignored:
    // no method takes one); field names keep their bracket notation.
    try {
      const form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
      const fields = new URLSearchParams();
      for (const [k, v] of form.entries()) if (typeof v === 'string') fields.append(k, v);
      return { input: parseParams(fields.toString()) };
    } catch {
      return { input: {}, note: 'The multipart body could not be read.' };
    }
  }
  return { input: {} };
}

/** Every answer's JSON text: from the answer's own cache when it was rendered before (`rendered.ts`). */
function writeResponse(res: ServerResponse, r: ApiResponse, head = false): void {
  const body = r.body === undefined ? '' : jsonText(r.body);
  // One flat list in the order the headers go out (the answer's, then type and length): no copy
  // of the answer's headers made to add two.
  const headers: string[] = [];
  for (const k in r.headers) headers.push(k, r.headers[k]!);
  if (r.body !== undefined) headers.push('Content-Type', 'application/json');
  headers.push('Content-Length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.length));
  res.writeHead(r.status, headers);
  res.end(head ? undefined : body);
}

export interface HttpOptions {
  logger?: Logger;
  /** Base URL clients see, when behind a proxy; else taken from the Host header. */
  publicBaseUrl?: string;
  /** The package's version, for `/healthz`. */
  version?: string;
}

/** What answers the API's requests: the service itself (SQLite), or a pool of service threads (PostgreSQL). */
export interface Answerer {
  call(req: ApiRequest): ApiResponse | Promise<ApiResponse>;
}

const ROUTE = /^api\/v1\/([^/]+)\/?$/;

/** A request read whole: the method it names, its verb, its parameters (and a note on how they were read). */
interface Incoming {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  verb: string;
  input: Record<string, unknown>;
  note: string | undefined;
}

/**
 * The request handler, for a server of one's own or tests. A request is answered once it has
 * come in whole (a GET or HEAD at once, one with a body when the body is read), in the check
 * phase of that turn of the event loop, together with every other request that came in during
 * the turn, in the order they came: they are stamped on arrival (`arrived`), so the first one's
 * freshness check of the service's caches (`PRAGMA data_version`, which costs as much as the
 * rest of a cheap request) is made after all of them arrived and serves all of them. No promise
 * between, but a body's read or a pool's answer.
 */
function createHandler(service: Answerer, opts: HttpOptions = {}, drain?: Drain) {
  const failed = (res: ServerResponse, e: unknown): void => {
    opts.logger?.error({ err: e }, 'http handler failed');
    try {
      if (!res.headersSent) writeResponse(res, new ApiError('server_error', 'Server Error').response());
      else res.destroy();
    } catch {
      res.destroy();
    }
  };
  /** The requests that came in whole during this turn, answered at its check phase. */
  let batch: Array<{ res: ServerResponse; job: () => void }> = [];
  const runBatch = (): void => {
    const jobs = batch;
    batch = [];
    for (const { res, job } of jobs) {
      // One request's failure never keeps the others of its turn unanswered.
      try {
        job();
      } catch (e) {
        failed(res, e);
      }
    }
  };
  /** Hand the request to the service and write its answer (awaited only when it is a promise). */
  const answer = ({ req, res, method, verb, input, note }: Incoming, arrival: number): void => {
    const auth = req.headers.authorization;
    const scheme = auth ? BEARER.exec(auth) : null;
    const bearer = scheme ? auth!.slice(scheme[0].length).trim() : undefined;
    const apiReq: ApiRequest = {
      method,
      verb,
      input,
      bearer,
      wantsJson: wantsJson(req.headers.accept, req.headers['x-requested-with'] as string | undefined),
      referer: req.headers.referer,
      baseUrl: opts.publicBaseUrl ?? `http://${req.headers.host ?? 'localhost'}/api/v1`,
      inputNote: note,
      arrival,
    };
    // Telemetry on: a span of this request, ended when its answer is written.
    const traced = apiRequestStarted(verb, method, req.headers as { traceparent?: string });
    if (traced) res.once('finish', () => traced(res.statusCode));
    // The SQLite service answers at once; only a pool's answer is awaited.
    const out = service.call(apiReq);
    const head = verb === 'HEAD';
    if (out instanceof Promise) void out.then((r) => writeResponse(res, r, head)).catch((e: unknown) => failed(res, e));
    else writeResponse(res, out, head);
  };
  /** Answer with the turn's other requests (see above); the stamp is taken now, the request being whole. */
  const answerLater = (incoming: Incoming): void => {
    const arrival = arrived();
    if (batch.length === 0) setImmediate(runBatch);
    batch.push({ res: incoming.res, job: () => answer(incoming, arrival) });
  };
  /** A request with a body: read (up to MAX_BODY_BYTES), parsed, merged over the query's parameters. */
  const withBody = async (
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    verb: string,
    query: Record<string, unknown>,
  ): Promise<void> => {
    try {
      let raw: Buffer;
      try {
        raw = await readBody(req, MAX_BODY_BYTES);
      } catch (e) {
        if (e instanceof TooLarge) {
          res.setHeader('Connection', 'close');
          writeResponse(res, new ApiError('payload_too_large', 'The request body is too large.').response());
          return;
        }
        throw e;
      }
      const parsed = await parseBody(String(req.headers['content-type'] ?? ''), raw);
      answerLater({ req, res, method, verb, input: { ...query, ...parsed.input }, note: parsed.note });
    } catch (e) {
      failed(res, e);
    }
  };
  return (req: IncomingMessage, res: ServerResponse): void | Promise<void> => {
    try {
      const target = req.url ?? '/';
      const q = target.indexOf('?');
      const path = (q < 0 ? target : target.slice(0, q)).replace(/^\/+/, '');
      // The probes, and while draining the refusal of every other request (else it is counted in hand).
      if (drain?.admit(res, `/${path}`)) return;
      const match = ROUTE.exec(path);
      if (!match) {
        writeResponse(res, new ApiError('route_not_found', `The route ${path || '/'} could not be found.`).response());
        return;
      }
      const verb = (req.method ?? 'GET').toUpperCase();
      const query: Record<string, unknown> = q < 0 || q === target.length - 1 ? {} : parseParams(target.slice(q + 1));
      if (verb !== 'GET' && verb !== 'HEAD') return withBody(req, res, match[1]!, verb, query);
      answerLater({ req, res, method: match[1]!, verb, input: query, note: undefined });
    } catch (e) {
      failed(res, e);
    }
  };
}

/**
 * The API's port taken (`bindFirst`) before the service is opened: the probes say "starting"
 * and every other request is refused with 503 and Retry-After, in the API's error shape, until
 * `serveOn`.
 */
export function bindApi(host: string, port: number, opts: HttpOptions = {}): Promise<Bound> {
  const drain = new Drain(opts.version ?? '0.0.0', (message, headers) => {
    const r = new ApiError('service_unavailable', message, undefined, headers).response();
    return { status: r.status, headers: { ...r.headers, 'Content-Type': 'application/json' }, body: JSON.stringify(r.body) };
  });
  return bindFirst(host, port, drain, { keepAliveTimeout: 5000 }, (server) =>
    // Requests node refuses before our handler (oversized headers or URL, malformed HTTP) still
    // get a JSON answer, not a bare status line.
    server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      if (!socket.writable) return socket.destroy();
      const e =
        err.code === 'HPE_HEADER_OVERFLOW'
          ? new ApiError('headers_too_large', 'The request headers or URL are too large.')
          : new ApiError('bad_request', 'Bad Request');
      const body = JSON.stringify(e.body());
      socket.end(
        `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }),
  );
}

/** `service` answering on the port `bound` took (bindApi): the server, its base URL (`…/api/v1`) and its drain (the probes' state). */
export function serveOn(bound: Bound, service: Answerer, opts: HttpOptions = {}): { server: Server; baseUrl: string; drain: Drain } {
  const { server, drain } = bound;
  const handler = createHandler(service, opts, drain);
  bound.serve((req, res) => void handler(req, res));
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { server, baseUrl: `http://${shownHost}:${addr.port}/api/v1`, drain };
}

/** Start listening; resolves with the server, its base URL (`…/api/v1`) and its drain (the probes' state). */
export async function listen(
  service: Answerer,
  host: string,
  port: number,
  opts: HttpOptions = {},
): Promise<{ server: Server; baseUrl: string; drain: Drain }> {
  return serveOn(await bindApi(host, port, opts), service, opts);
}
