/**
 * The remote backend: the same `call(method, params)` as the built-in service, over undici to
 * a real instance. Statuses and bodies pass through unchanged. A 429 was not carried out, so it
 * is waited out and sent again; a write that may have reached the server is never sent twice
 * (the remote service does not deduplicate): the caller is told the outcome is unknown. Reads
 * retry with backoff. Requests are paced below the per-key limit, corrected by the service's
 * X-RateLimit headers. The key never appears in a log line or an error text.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Pool, errors as undiciErrors } from 'undici';
import type { ApiResponse, Backend, CallOptions } from '../api/backend.js';
import { findMethod } from '../api/catalog.js';
import { verbFor, type MethodDef, type Verb } from '../api/define.js';
import { ApiError, outcomeUnknownText } from '../api/errors.js';
import { parseOrderedJson } from '../common/ordered.js';
import { sleep, waitOut429 } from '../common/retry.js';
import { Pacer } from './pacer.js';

export interface RemoteOptions {
  /** Base URL ending in `v1`, e.g. `https://host/api/v1`. */
  baseUrl: string;
  /** The key; or, read at each call, the key of the request being answered (none: the call is refused, 401, unsent). */
  apiKey: string | (() => string | undefined);
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** Requests a minute this client allows itself (below the service's 120). 0: no pacing. */
  pacePerMinute?: number;
  /** Longest single wait for a 429's Retry-After, and how many 429s to wait out. */
  maxRetryAfterMs?: number;
  max429Retries?: number;
  /** Attempts for a read that failed in transport or got a 5xx. */
  readAttempts?: number;
  backoffMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Clock of the pacing, in ms (tests pair it with `sleep`). */
  now?: () => number;
}

/** Query string in bracket notation (`fields[0][name]=…`), as the service reads it. */
export function toQuery(params: Record<string, unknown>): string {
  const parts: string[] = [];
  const walk = (prefix: string, v: unknown) => {
    if (v === undefined) return;
    if (v === null) parts.push(`${encodeURIComponent(prefix)}=`);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(`${prefix}[${i}]`, x));
    else if (typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(`${prefix}[${k}]`, x);
    else if (typeof v === 'boolean') parts.push(`${encodeURIComponent(prefix)}=${v ? 1 : 0}`);
    else parts.push(`${encodeURIComponent(prefix)}=${encodeURIComponent(String(v))}`);
  };
  for (const [k, v] of Object.entries(params)) walk(k, v);
  return parts.join('&');
}

/** One of the client's own answers (an entry of the error table), its text also a warning. */
function failure(
  code: 'cancelled' | 'outcome_unknown' | 'upstream_unreachable' | 'bad_upstream_response',
  message: string,
  status?: number,
): ApiResponse {
  return { ...new ApiError(code, message, undefined, {}, status).response(), warnings: [message] };
}

/** A key this long is redacted wherever it appears: no word of other text holds it by chance. */
const REDACT_ANYWHERE = 16;
/** A character that continues a word: a letter, digit, `_` or `-`; a `.` between two of them does too (127.0.0.1, a host name). */
const WORD = String.raw`[\p{L}\p{N}_-]`;

/**
 * `text` with `key` as `[redacted]`. A short key only where it stands as a whole word, never
 * inside a longer run of word characters: the key "1" goes from "key 1." but "127.0.0.1:9" stays.
 */
export function redactKey(text: string, key: string): string {
  if (key === '') return text;
  if (key.length >= REDACT_ANYWHERE) return text.split(key).join('[redacted]');
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const whole = new RegExp(`(?<!${WORD})(?<!${WORD}\\.)${escaped}(?!${WORD})(?!\\.${WORD})`, 'gu');
  return text.replace(whole, '[redacted]');
}

export class RemoteBackend implements Backend {
  private readonly pool: Pool;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly pacer: Pacer;
  /**
   * A key per request (`--auth key|oauth`): the service's 120 a minute is per key, so each key
   * is paced on its own, named by an HMAC under a secret of this process alone (never the key),
   * and forgotten two minutes after its last request.
   */
  private readonly pacers = new Map<string, { pacer: Pacer; last: number }>();
  private readonly pacerSecret = randomBytes(32);
  private swept = 0;
  private readonly sleep: NonNullable<RemoteOptions['sleep']>;

  constructor(private readonly o: RemoteOptions) {
    const url = new URL(o.baseUrl.replace(/\/+$/, ''));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('the remote base URL must be http(s)');
    this.origin = url.origin;
    this.basePath = url.pathname;
    this.pool = new Pool(this.origin, {
      connections: 8,
      keepAliveTimeout: 30_000,
      connectTimeout: o.connectTimeoutMs ?? 10_000,
      headersTimeout: o.headersTimeoutMs ?? 30_000,
      bodyTimeout: o.bodyTimeoutMs ?? 30_000,
    });
    this.sleep = o.sleep ?? sleep;
    this.pacer = new Pacer(o.pacePerMinute ?? 110, 60_000, this.sleep, o.now);
  }

  /** The pacer of this call's key: the one pacer, or (a key per request) that key's own. */
  private pacerOf(): Pacer {
    const key = typeof this.o.apiKey === 'function' ? this.o.apiKey() : undefined;
    if (key === undefined) return this.pacer;
    const now = Date.now();
    // Swept at most every 10 s, and bounded (least recently used first): keys no one accepted cost nothing for long.
    if (now - this.swept > 10_000) {
      this.swept = now;
      for (const [name, p] of this.pacers) if (now - p.last > 120_000) this.pacers.delete(name);
    }
    const name = createHmac('sha256', this.pacerSecret).update(key).digest('base64url');
    const kept = this.pacers.get(name) ?? { pacer: new Pacer(this.pacer.limit, 60_000, this.sleep, this.o.now), last: now };
    kept.last = now;
    this.pacers.delete(name);
    this.pacers.set(name, kept);
    if (this.pacers.size > 10_000) this.pacers.delete(this.pacers.keys().next().value!);
    return kept.pacer;
  }

  /** The key of this call. */
  private key(): string | undefined {
    return typeof this.o.apiKey === 'function' ? this.o.apiKey() : this.o.apiKey;
  }

  /** Redact the key from any text that might carry it (error messages, URLs). */
  private redact(text: string, key: string): string {
    return key ? redactKey(text, key) : text;
  }

  async call(method: string, params: Record<string, unknown>, opts: CallOptions = {}): Promise<ApiResponse> {
    const def = findMethod(method);
    try {
      // A 429 was not carried out: wait it out and send again, also for a write.
      return await waitOut429(() => this.attempt(method, def, params, opts), {
        retries: this.o.max429Retries ?? 3,
        maxWaitMs: this.o.maxRetryAfterMs ?? 65_000,
        signal: opts.signal,
        sleep: this.sleep,
        onWait: (ms) => opts.onProgress?.(`rate limited by the service: waiting ${Math.ceil(ms / 1000)} s (Retry-After)`),
      });
    } catch (e) {
      // Aborted while waiting (pacing, a 429, a backoff): an answer, never a throw.
      if (opts.signal?.aborted) return failure('cancelled', 'The call was cancelled.');
      throw e;
    }
  }

  /** One send, and for a read the resends after a transport failure or a 5xx (with backoff). */
  private async attempt(
    method: string,
    def: MethodDef | undefined,
    params: Record<string, unknown>,
    opts: CallOptions,
  ): Promise<ApiResponse> {
    const verb = def ? verbFor(def) : 'POST';
    const isRead = def?.annotations.readOnlyHint ?? false;
    const attempts = isRead ? (this.o.readAttempts ?? 3) : 1;
    for (let attempt = 1; ; attempt++) {
      const pacer = this.pacerOf();
      await pacer.take(opts.signal, (ms) => opts.onProgress?.(`pacing requests: waiting ${Math.ceil(ms / 1000)} s`));
      // Cancelled before it left: nothing was sent.
      if (opts.signal?.aborted) return failure('cancelled', 'The call was cancelled.');
      const outcome = await this.send(method, verb, params, opts.signal);
      if ('response' in outcome) {
        const r = outcome.response;
        // The service's count of this key's window (another process may share the key), its limit, a 429's wait.
        pacer.observe(r.status, r.headers);
        if (r.status >= 500 && !isRead) {
          return {
            ...r,
            warnings: [outcomeUnknownText(method, def, `the service answered ${r.status}; it was not sent again`)],
          };
        }
        if (r.status >= 500 && attempt < attempts) {
          await this.sleep((this.o.backoffMs ?? 250) * 2 ** (attempt - 1), opts.signal);
          continue;
        }
        return r;
      }
      // No usable answer. A write cancelled once under way may have been carried out all the
      // same: its outcome is unknown (never "cancelled", after which its idempotency key would
      // be given back and a retry could move the money twice).
      const { kind, detail, sent } = outcome;
      if (!isRead && sent) {
        const why = opts.signal?.aborted
          ? 'it was cancelled after it was sent, and the service may have carried it out'
          : `${detail}; it was not sent again because the service does not deduplicate`;
        return failure('outcome_unknown', outcomeUnknownText(method, def, why), kind === 'timeout' ? 504 : 502);
      }
      if (opts.signal?.aborted) return failure('cancelled', 'The call was cancelled.');
      if (attempt < attempts) {
        await this.sleep((this.o.backoffMs ?? 250) * 2 ** (attempt - 1), opts.signal);
        continue;
      }
      return kind === 'bad_body'
        ? failure('bad_upstream_response', `The service's answer to ${method} was not JSON (${detail}).`)
        : failure('upstream_unreachable', `The service could not be reached for ${method} (${detail}).`, kind === 'timeout' ? 504 : 502);
    }
  }

  private async send(
    method: string,
    verb: Verb,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<{ response: ApiResponse } | { kind: 'timeout' | 'network' | 'bad_body'; detail: string; sent: boolean }> {
    const key = this.key();
    if (key === undefined) return { response: new ApiError('unauthorized', 'unauthorized').response() };
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Bearer ${key}`,
    };
    let path = `${this.basePath}/${encodeURIComponent(method)}`;
    let body: string | undefined;
    if (verb === 'GET') {
      const q = toQuery(params);
      if (q) path += `?${q}`;
    } else {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(params);
    }
    let sent = false;
    try {
      const res = await this.pool.request({ method: verb, path, headers, body, signal });
      sent = true;
      const text = await res.body.text();
      const outHeaders: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) outHeaders[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      if (res.statusCode === 204 || text === '') return { response: { status: res.statusCode, headers: outHeaders, body: undefined } };
      let parsed: unknown;
      try {
        // Key order is part of some answers (a list's fields by slug): keep it.
        parsed = parseOrderedJson(text);
      } catch {
        if (res.statusCode >= 400) {
          // An HTML error page or other non-JSON error: keep the status, give a JSON body.
          const message = `The service answered ${res.statusCode} with a body that is not JSON.`;
          return { response: { ...failure('bad_upstream_response', message, res.statusCode), headers: outHeaders } };
        }
        return { kind: 'bad_body', detail: `status ${res.statusCode}, ${text.length} bytes`, sent: true };
      }
      return { response: { status: res.statusCode, headers: outHeaders, body: parsed } };
    } catch (e) {
      const err = e as Error & { code?: string };
      // Connect errors and connect timeouts mean the request never left.
      const neverSent =
        err instanceof undiciErrors.ConnectTimeoutError ||
        ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH'].includes(err.code ?? '');
      const timeout =
        err instanceof undiciErrors.HeadersTimeoutError ||
        err instanceof undiciErrors.BodyTimeoutError ||
        err instanceof undiciErrors.ConnectTimeoutError;
      return {
        kind: timeout ? 'timeout' : 'network',
        detail: this.redact(`${err.code ?? err.name}: ${err.message}`, key),
        sent: sent || !neverSent,
      };
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/**
 * Check a remote at start-up with getMe: the key's owner, or an error whose one-line message
 * names the problem and the fix and never shows the key (id 0: getMe is switched off).
 */
export async function checkRemote(backend: RemoteBackend, baseUrl: string): Promise<{ id: number; name: string }> {
  const r = await backend.call('getMe', {});
  const body = r.body as { code?: string; message?: string; data?: { id?: unknown; name?: unknown } } | undefined;
  if (r.status === 200 && typeof body?.data?.id === 'number') return { id: body.data.id, name: String(body.data.name ?? '') };
  // getMe switched off after its sunset: the key got past authentication, so it is good.
  if (r.status === 410) return { id: 0, name: '' };
  const why: Record<number, string> = {
    401: 'the key was refused (401): set WORKSPACE_API_KEY to an API key of this service',
    402: "the key's owner is on the Free plan (402) and the API needs Pro: upgrade the plan or use a Pro owner's key",
    403: "the key's owner is blocked (403): have the owner unblocked or use another owner's key",
  };
  if (why[r.status]) throw new Error(`remote ${baseUrl}: ${why[r.status]}`);
  if (body?.code === 'upstream_unreachable')
    throw new Error(
      `remote ${baseUrl} ${body.message!.replace(/^The service /, '').replace(/\.$/, '')}: check the URL and that the service is up`,
    );
  // An HTML page, a 404, or JSON of another shape: something answers, but not the Workspace API.
  // (A non-JSON error page keeps the status it came with; a non-JSON success is our 502.)
  const answered =
    r.status === 200
      ? 'JSON without an owner'
      : body?.code === 'bad_upstream_response' && r.status === 502
        ? 'a body that is not JSON'
        : `status ${r.status}`;
  throw new Error(
    `remote ${baseUrl} is not a Workspace API (getMe answered ${answered}): give --remote the API's base URL, the one that ends in /api/v1`,
  );
}
