/**
 * The request pipeline every way in goes through (HTTP, the MCP server): route, verb, key,
 * plan, block, rate limit, deprecation, validation, handler. Every refusal is an ApiError of the
 * error table, answered by its own `response()`; anything unexpected becomes a logged
 * `server_error` (500) that leaks nothing.
 */
import type { AdmitOptions, ApiResponse } from '../api/backend.js';
import { findMethod } from '../api/catalog.js';
import type { MethodDef } from '../api/define.js';
import { ApiError, fail, outcomeUnknown } from '../api/errors.js';
import { attributeName, validate, type ErrorBag, type Shape } from '../api/rules.js';
import { hashesEqual } from '../store/keys.js';
import type { OwnerRow } from '../store/owners.js';
import { StoreBadText, StoreConflict, StoreOutcomeUnknown, StoreUnavailable, type StoreApi } from '../store/store-api.js';
import type { Logger } from '../common/log.js';
import { Reply, type Ctx, type Secrets } from './context.js';
import { HANDLERS, PRECHECKS, type Precheck } from './handlers.js';
import { MAX_DEPTH, normalizeInput, tooDeep } from './input.js';
import { RateLimiter } from './rate-limit.js';

export { arrived } from '../store/core-cache.js';

export interface ApiRequest {
  /** The last path segment: a method name or alias. */
  method: string;
  /** HTTP verb; in-process callers send the one `verbFor` gives. */
  verb: string;
  /** Parameters from query and body, merged, as parsed. */
  input: Record<string, unknown>;
  /** The token of an `Authorization: Bearer` header. */
  bearer?: string;
  /**
   * In-process callers only (the MCP server's local backend with no key): act as this owner
   * without a key. Plan, block and rate limit still apply. Never set from HTTP input.
   */
  asOwner?: number;
  /**
   * In-process callers with a key of their own (the MCP server's local backend): the key's
   * hash, worked out once instead of on every call. Checked as a bearer key is, at each call.
   */
  keyHash?: string;
  /**
   * In-process callers only, with `keyHash`: the owner of that key as read for the request being
   * answered (`Service.handed`), used instead of reading it again when its key hash is
   * `keyHash`; plan and block are checked again. Never set from HTTP input.
   */
  owner?: OwnerRow;
  /** Whether the client asked for JSON (Laravel's expectsJson). */
  wantsJson: boolean;
  referer?: string;
  /** Base URL ending in `/api/v1`, for paging links. */
  baseUrl: string;
  /** Added to a 422's message, e.g. that the body was not valid JSON. */
  inputNote?: string;
  /**
   * From `arrived()`, taken by the HTTP layer once the request has come in whole: the request
   * may trust a freshness check of the caches made after it (`CoreCache.hold`). Without it the
   * caches are checked for this request.
   */
  arrival?: number;
}

export interface ServiceOptions {
  rateLimit?: number;
  secrets: Secrets;
  logger?: Logger;
  /** Clock, for tests of sunsets and windows. */
  now?: () => Date;
}

const API_PREFIX = 'api/v1/';

/**
 * How long the owner a request's admission read (`--auth key`, `--auth oauth`) is handed to the
 * next call by that key instead of being read again: once, and only this soon after, so that a
 * key regenerated meanwhile stops every later call of work still under way.
 */
const HANDED_MS = 1_000;
/** Owners handed on at most at once (keys admitted within HANDED_MS). */
const MAX_HANDED = 10_000;

export class Service {
  readonly limiter: RateLimiter;
  private readonly now: () => Date;
  /** Owners read for a request just admitted, by key hash, for that key's next call (`hand`, `handed`). */
  private readonly toHand = new Map<string, { row: OwnerRow; at: number }>();
  constructor(
    readonly store: StoreApi,
    private readonly opts: ServiceOptions,
  ) {
    this.limiter = new RateLimiter(opts.rateLimit ?? 120, store.rateWindows);
    this.now = opts.now ?? (() => new Date());
  }

  /** Answer one request. Never throws. */
  call(req: ApiRequest): ApiResponse {
    const headers: Record<string, string> = {};
    let def: MethodDef | undefined;
    try {
      // One freshness check of the owner and deprecation cache for the whole request (a failed
      // read of it is an unexpected error, answered below).
      this.store.cache.hold(req.arrival);
      def = findMethod(req.method);
      if (!def) throw new ApiError('route_not_found', `The route ${API_PREFIX}${req.method} could not be found.`);
      const now = this.now();
      // Every answer of a deprecated method says so, refusals included.
      const sunset = this.deprecation(req.method, headers);
      const verbs = verbsOf(def);
      if (req.verb === 'OPTIONS') {
        // As Laravel's router answers a preflight or probe: the methods the route takes.
        headers.Allow = verbs.join(', ');
        return reply(200, headers, undefined);
      }
      if (!verbs.includes(req.verb)) {
        throw new ApiError(
          'method_not_allowed',
          `The ${req.verb} method is not supported for route ${API_PREFIX}${req.method}. Supported methods: ${verbs.join(', ')}.`,
          undefined,
          { Allow: verbs.join(', ') },
        );
      }
      const input: Record<string, unknown> = { ...req.input };
      const token = req.bearer || (typeof input.api_token === 'string' ? input.api_token : undefined);
      delete input.api_token;
      const owner = this.authenticate(token, req.asOwner, req.keyHash, req.owner);
      const rate = this.limiter.take(owner.id, now.getTime());
      Object.assign(headers, rate.headers);
      if (!rate.allowed) throw new ApiError('too_many_attempts', 'Too Many Attempts.');
      if (sunset && now.getTime() >= sunset.getTime()) {
        throw new ApiError('method_removed', `The method ${req.method} was switched off on ${sunset.toISOString()}.`);
      }

      let note = req.inputNote;
      if (tooDeep(input)) {
        // Like a JSON body PHP cannot decode: no input at all.
        for (const k of Object.keys(input)) delete input[k];
        note = `The request input is nested deeper than ${MAX_DEPTH} levels.`;
      }
      const normalized = normalizeInput(input) as Record<string, unknown>;
      for (const [alias, canonical] of Object.entries(def.paramAliases ?? {})) {
        if (normalized[canonical] == null && normalized[alias] != null) normalized[canonical] = normalized[alias];
        delete normalized[alias];
      }
      const ctx: Ctx = { store: this.store, owner, url: `${req.baseUrl}/${req.method}`, now, secrets: this.opts.secrets };
      const checked = validate(def.params, normalized);
      if (!checked.ok) {
        // Checks that need the database add their errors to the same answer, as Laravel's
        // single validation pass would list them.
        const precheck = (PRECHECKS as Record<string, Precheck | undefined>)[def.name];
        precheck?.(ctx, checked.partial, checked.errors);
        throw fail.validation(orderErrors(def.params, checked.errors), note);
      }
      const handler = (HANDLERS as Record<string, (c: Ctx, p: unknown) => unknown>)[def.name]!;
      const out = handler(ctx, checked.params);
      if (out instanceof Reply) return reply(out.status, headers, out.body);
      if (def.status === 204) return reply(204, headers, undefined);
      return reply(def.status, headers, out);
    } catch (thrown) {
      // A text the database cannot hold (a NUL on PostgreSQL): bad input, refused as any other.
      const e = thrown instanceof StoreBadText ? fail.validation(nulFields(req.input)) : thrown;
      if (e instanceof ApiError) {
        // Every validation failure, also one a handler finds (a slug already taken), is a
        // redirect for a client that did not ask for JSON.
        if (e.name_ === 'validation' && !req.wantsJson) {
          // Back where the request came from, else the site root (an absolute URL, as Laravel's).
          headers.Location = req.referer || `${req.baseUrl.replace(/\/api\/v1$/, '')}/`;
          return reply(302, headers, undefined);
        }
        return e.response(headers);
      }
      // The store rolled the transaction back: nothing was changed, the client may try again
      // (or a COMMIT's outcome could not be learnt, and the answer says so).
      if (e instanceof StoreUnavailable) return unavailable(e, headers, this.opts.logger, def?.name ?? req.method);
      this.opts.logger?.error({ err: e, method: def?.name ?? req.method }, 'unexpected error');
      return new ApiError('server_error', 'Server Error').response(headers);
    } finally {
      this.store.cache.release();
    }
  }

  /**
   * Whether the owner of a request may call the API now, as every method checks first (key,
   * plan, block, rate limit, counted as one request): undefined, or the refusal. For the MCP
   * server's own composite tools, which are no API method and so have no deprecation of their own.
   * `counted: false`: key, plan and block only, no request counted (a completion, asked as a
   * person types, must not spend the owner's rate limit).
   */
  admit(req: Pick<ApiRequest, 'bearer' | 'asOwner' | 'keyHash' | 'owner'>, o: AdmitOptions = {}): ApiResponse | undefined {
    const headers: Record<string, string> = {};
    try {
      const owner = this.authenticate(req.bearer, req.asOwner, req.keyHash, req.owner);
      if (o.counted === false) return undefined;
      const rate = this.limiter.take(owner.id, this.now().getTime());
      Object.assign(headers, rate.headers);
      if (!rate.allowed) throw new ApiError('too_many_attempts', 'Too Many Attempts.');
      return undefined;
    } catch (e) {
      if (e instanceof ApiError) return e.response(headers);
      if (e instanceof StoreUnavailable) return unavailable(e, headers, this.opts.logger, 'admit');
      throw e;
    }
  }

  /**
   * The owner of the key whose hash is `keyHash`, as every method checks it first (key, plan,
   * block; no request counted), or the refusal: who a request of `mcp --http --auth key` is. A
   * checked owner is handed to the key's next call (`handed`): one read for the request.
   */
  ownerOf(keyHash: string): OwnerRow | ApiResponse {
    this.toHand.delete(keyHash);
    try {
      const owner = this.authenticate(undefined, undefined, keyHash);
      this.hand(keyHash, owner);
      return owner;
    } catch (e) {
      if (e instanceof ApiError) return e.response({});
      if (e instanceof StoreUnavailable) return unavailable(e, {}, this.opts.logger, 'ownerOf');
      throw e;
    }
  }

  /**
   * `ownerOf` over an owner read elsewhere: `read` (an async read of the owners table by key
   * hash, which never holds the serving thread: PostgreSQL's pool), then the same checks. A
   * checked owner is handed to the key's next call (`handed`): one read for the request.
   */
  async ownerOfAsync(keyHash: string, read: (keyHash: string) => Promise<OwnerRow | undefined>): Promise<OwnerRow | ApiResponse> {
    this.toHand.delete(keyHash);
    try {
      const row = await read(keyHash);
      const owner = this.checked(row);
      this.hand(keyHash, owner);
      return owner;
    } catch (e) {
      if (e instanceof ApiError) return e.response({});
      if (e instanceof StoreUnavailable) return unavailable(e, {}, this.opts.logger, 'ownerOf');
      throw e;
    }
  }

  /** Keeps `row`, just read and checked for a request admitted now, for the next call by `keyHash` (within HANDED_MS). */
  private hand(keyHash: string, row: OwnerRow): void {
    if (this.toHand.size >= MAX_HANDED) this.toHand.clear();
    this.toHand.set(keyHash, { row, at: Date.now() });
  }

  /**
   * The owner of `keyHash` read for a request admitted within HANDED_MS, taken (a second call
   * reads it again), or undefined: what an in-process caller puts in `ApiRequest.owner`.
   */
  handed(keyHash: string): OwnerRow | undefined {
    const h = this.toHand.get(keyHash);
    if (h === undefined) return undefined;
    this.toHand.delete(keyHash);
    return Date.now() - h.at <= HANDED_MS ? h.row : undefined;
  }

  private authenticate(token: string | undefined, asOwner: number | undefined, keyHash?: string, handed?: OwnerRow): OwnerRow {
    // A caller's own key goes before any api_token in the input, as a bearer key does.
    const owner =
      keyHash !== undefined
        ? handed?.key_hash && hashesEqual(handed.key_hash, keyHash)
          ? handed
          : this.store.owners.byHash(keyHash)
        : token
          ? this.store.owners.byKey(token)
          : asOwner !== undefined
            ? this.store.owners.get(asOwner)
            : undefined;
    return this.checked(owner);
  }

  /** The owner found, if it may call the API (plan, block), else the refusal thrown. */
  private checked(owner: OwnerRow | undefined): OwnerRow {
    if (!owner) throw new ApiError('unauthorized', 'unauthorized');
    if (owner.plan !== 'pro') throw new ApiError('pro_required', 'The API is available on the Pro plan only.');
    if (owner.blocked_at) throw new ApiError('owner_blocked', 'Your account is blocked.');
    return owner;
  }

  /** A deprecated method (by the name it was called): its headers, and its sunset. */
  private deprecation(method: string, headers: Record<string, string>): Date | undefined {
    const dep = this.store.settings.deprecation(method);
    if (!dep) return undefined;
    const sunset = new Date(dep.sunset);
    headers.Deprecation = 'true';
    headers.Sunset = sunset.toUTCString();
    return sunset;
  }
}

/** Laravel's order: top-level parameters in rule order, then keys inside arrays and objects. */
function orderErrors(shape: Shape, bag: ErrorBag): ErrorBag {
  const out: ErrorBag = new Map();
  for (const k of Object.keys(shape)) {
    const v = bag.get(k);
    if (v) out.set(k, v);
  }
  for (const [k, v] of bag) if (!out.has(k)) out.set(k, v);
  return out;
}

/** The input's texts that hold a NUL character, each with Laravel's wording, by its dot key. */
function nulFields(input: Record<string, unknown>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const walk = (v: unknown, key: string): void => {
    if (typeof v === 'string') {
      if (v.includes('\0')) out.set(key, [`The ${attributeName(key)} field must not contain the NUL character.`]);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(x, key === '' ? k : `${key}.${k}`);
    }
  };
  for (const [k, v] of Object.entries(input)) if (k !== 'api_token') walk(v, k);
  if (out.size === 0) out.set('input', ['The input must not contain the NUL character.']);
  return out;
}

/** A 503 with Retry-After for a database that cannot be reached now. */
function unavailable(e: StoreUnavailable, headers: Record<string, string>, logger: Logger | undefined, method: string): ApiResponse {
  // A conflict inside an outer transaction is no outage: that transaction runs again.
  if (!(e instanceof StoreConflict)) logger?.warn({ err: e.message, method }, 'database unavailable');
  return unavailableAnswer(e, headers, method);
}

/**
 * The 503 with Retry-After for a store that could not answer. Nothing was changed, except when
 * the connection was lost during COMMIT and the outcome could not be learnt: then the answer
 * says so, in the shape of every `outcome_unknown`, so that no client sends a change (a debit)
 * again before reading it back.
 */
export function unavailableAnswer(e: StoreUnavailable, headers: Record<string, string> = {}, method?: string): ApiResponse {
  const retry = { 'Retry-After': String(e.retryAfter) };
  if (e instanceof StoreOutcomeUnknown) {
    const why = 'Service Unavailable: the connection to the database was lost while the change was being committed';
    const def = method === undefined ? undefined : findMethod(method);
    return outcomeUnknown(method ?? 'a change', def, why, { headers: retry, status: 503 }).response(headers);
  }
  return new ApiError('service_unavailable', 'Service Unavailable', undefined, retry).response(headers);
}

/** The verbs a method's route takes (GET brings HEAD), worked out once a method. */
const VERBS = new Map<MethodDef, readonly string[]>();
function verbsOf(def: MethodDef): readonly string[] {
  let verbs = VERBS.get(def);
  if (!verbs) {
    verbs = def.verbs.includes('GET') ? ['GET', 'HEAD', ...def.verbs.filter((v) => v !== 'GET')] : [...def.verbs];
    VERBS.set(def, verbs);
  }
  return verbs;
}

function reply(status: number, headers: Record<string, string>, body: unknown): ApiResponse {
  return { status, headers, body };
}
