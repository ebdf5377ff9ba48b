/**
 * Who a request to the MCP server over HTTP is, under `--auth key` and `--auth oauth`: its key
 * (the bearer itself, or the one the access token's grant holds), the key's owner as the backend
 * answers it (checked on every request, or every `keyRecheckMs` for a grant), and the person's
 * rate. The answer is the owner and what the handlers learn of the caller (`AuthInfo`: the
 * owner and the OAuth client, never the key), or the refusal to send.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { SCOPES } from '../../api/scopes.js';
import { countRefusal } from '../../common/telemetry.js';
import { bearerOf } from './bearer.js';
import { grantedScopes } from './scopes.js';
import { PersonRate } from './person-rate.js';

/** The owner of a key, or the backend's refusal. `keyHash`: the key's hash, when the owner's context acts by it (the built-in service). */
export type KeyOwner = { id: number; keyHash?: string } | { status: number; message: string };

/** What `--auth key` needs of a backend: who a key is, and (remote) the key's scope for the calls upstream. */
export interface KeyOwners {
  /** The owner of `key` (the bearer of the request being answered, or the key an OAuth grant holds). */
  owner(key: string): Promise<KeyOwner>;
  /**
   * Runs `fn` with `key` as the key of the backend's calls until `ended` is called (when the
   * response closed; request-key.ts): a backend that sends each call with its request's key
   * (remote). Absent, `fn` just runs: each owner's context acts by the key it was made for.
   */
  within?<T>(key: string, fn: (ended: () => void) => T): T;
}

/** An answer to send as it is (status, headers, body). */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A grant of OAuth sign-in as the endpoint needs it: whose, and through which client. */
export interface Grant {
  id: string;
  owner_id: number;
  client_id: string;
  client_name: string;
}

/** The address a request came to: the MCP endpoint, or its read-only door (its own protected resource under `--auth oauth`). */
export type ResourcePath = 'mcp' | 'mcp/read-only';

/** `--auth oauth` (src/oauth/): the sign-in's own addresses and the key behind an access token. */
interface SignIn {
  /** The public URL's host name: requests through the TLS proxy carry it. */
  readonly hostName: string;
  /** Answers a request for one of sign-in's addresses (metadata, registration, consent, token, revocation); false for any other path. */
  serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  /** The grant and key behind an Authorization header, or the 401 (with its `resource_metadata` challenge) to send. */
  signedIn(header: string | undefined, at: ResourcePath): Promise<{ grant: Grant; key: string; scopes: readonly string[] } | HttpAnswer>;
  /** The backend refused the grant's key: the grant is revoked; the 401 that makes the client sign in again. */
  keyRefused(grant: Grant, why: string, at: ResourcePath): Promise<HttpAnswer>;
}

/** How requests say who they are, and the bounds on each person. */
export interface CallerOptions extends KeyOwners {
  /** Requests a minute one person may make (after who they are is known), so no one starves the others; 0: no bound. Default 600. */
  perPersonPerMinute?: number;
  /** `--auth oauth`: sign-in's own addresses, and a request's key from its access token instead of its bearer. */
  signIn?: SignIn;
  /**
   * `--auth oauth`: how long a grant's key, once getMe accepted it, is taken as working without
   * asking again (default 0: every request asks). A remote API counts each getMe against the
   * person's 120 a minute; their calls in between still fail on their own if the key stopped.
   */
  keyRecheckMs?: number;
}

/** A request's credential: its key, and the grant that holds it (with the scopes it grants at that address) under `--auth oauth`. */
export interface Credential {
  key: string;
  grant?: Grant;
  scopes?: readonly string[];
  at?: ResourcePath;
}

/** Who a request is, once admitted: its owner (acting by the key with `keyHash`), and what the handlers learn of it. */
export interface Caller {
  owner: { id: number; keyHash?: string };
  auth: AuthInfo;
}

/** The JSON-RPC error body of a refusal (the endpoint's own answers carry no id). */
export function refusal(status: number, message: string, headers: Record<string, string> = {}, code = -32000): HttpAnswer {
  return {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }),
  };
}

const unauthorized = (why: string) => refusal(401, `Unauthorized: ${why}`, { 'WWW-Authenticate': 'Bearer' });

/** Grants whose key the backend accepted lately, kept at most this many. */
const MAX_CHECKED = 10_000;

/** Who the requests of `--auth key` and `--auth oauth` are. */
export class CallerCheck {
  private readonly rate: PersonRate;
  /** `--auth oauth`: grants whose key getMe accepted lately (keyRecheckMs), by grant id. */
  private readonly checked = new Map<string, { owner: number; keyHash?: string; until: number }>();

  constructor(private readonly o: CallerOptions) {
    this.rate = new PersonRate(o.perPersonPerMinute ?? 600);
  }

  /** The request's credential from its Authorization header, or the 401 to send. */
  async credential(header: string | undefined, at: ResourcePath = 'mcp'): Promise<Credential | HttpAnswer> {
    if (this.o.signIn) {
      const signed = await this.o.signIn.signedIn(header, at);
      return 'status' in signed ? signed : { ...signed, at };
    }
    const key = bearerOf(header);
    return key === undefined ? unauthorized('send your Workspace API key as Authorization: Bearer <key>') : { key };
  }

  /** Runs `fn` within the key's scope when the backend has one (ended with the response), else just runs it. */
  within<T>(key: string, fn: (ended?: () => void) => T): T {
    return this.o.within ? this.o.within(key, fn) : fn();
  }

  /**
   * The caller behind `cred`, or the refusal: the key's owner (asked of the backend, or taken from
   * a recent check of the same grant), the grant's own owner, the person's rate.
   */
  async admit(cred: Credential, now = Date.now()): Promise<Caller | HttpAnswer> {
    const { key, grant } = cred;
    const known = grant ? this.checked.get(grant.id) : undefined;
    const who = known && known.until > now ? { id: known.owner, keyHash: known.keyHash } : await this.o.owner(key);
    if (!('id' in who)) {
      if (who.status === 401 || who.status === 402 || who.status === 403) {
        return grant
          ? await this.o.signIn!.keyRefused(grant, who.message, cred.at ?? 'mcp')
          : unauthorized(`the key was refused (${who.message})`);
      }
      return refusal(who.status >= 500 ? who.status : 503, `The key's owner could not be learnt: ${who.message}`, { 'Retry-After': '30' });
    }
    if (grant && grant.owner_id !== who.id)
      return await this.o.signIn!.keyRefused(grant, 'the key now belongs to someone else', cred.at ?? 'mcp');
    if (grant && !(known && known.until > now) && this.o.keyRecheckMs) {
      if (this.checked.size >= MAX_CHECKED) this.checked.delete(this.checked.keys().next().value!);
      this.checked.set(grant.id, { owner: who.id, keyHash: who.keyHash, until: now + this.o.keyRecheckMs });
    }
    // The time now, not the request's start: the owner check may have waited (getMe upstream).
    const wait = this.rate.take(who.id);
    if (wait !== undefined) countRefusal('rate');
    if (wait !== undefined)
      return refusal(429, `Too many requests from you: at most ${this.rate.perMinute} a minute; try again in ${wait} s`, {
        'Retry-After': String(wait),
      });
    // Who is calling, for the handlers (ctx.http.authInfo) in both eras: the owner (and the OAuth client), never the key.
    // The scopes: what the person granted at sign-in; a key of its own reaches all.
    const auth: AuthInfo = grant
      ? {
          token: '',
          clientId: grant.client_id,
          scopes: grantedScopes(cred.scopes ?? ['workspace:read']),
          extra: { owner: who.id, client: grant.client_name, grant: grant.id },
        }
      : { token: '', clientId: `owner ${who.id}`, scopes: [...SCOPES] };
    return { owner: who, auth };
  }
}
