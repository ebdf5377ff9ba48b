/**
 * The clients: RFC 7591 registration (public clients only, bounded per hour, all together and
 * per address), and who a `client_id` names, a client registered here or the URL of its Client
 * ID Metadata Document (clients.ts).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuthErrorCode } from '@modelcontextprotocol/server';
import type { Context } from './context.js';
import { checkedMetadata, ClientError, type Client, type ClientDocuments } from './clients.js';
import { addressOf, Counts } from './limits.js';
import { body, CORS, NO_STORE, oauthError, send } from './replies.js';

/** Registrations taken an hour, all clients together, and from one address (a host's servers share a few). */
const REGISTRATIONS_PER_HOUR = 10_000;
const REGISTRATIONS_PER_ADDRESS = 200;
const HOUR_MS = 60 * 60_000;

export class Registration {
  private readonly registrations = new Counts(REGISTRATIONS_PER_ADDRESS, HOUR_MS);

  constructor(
    private readonly ctx: Context,
    private readonly docs: ClientDocuments,
  ) {}

  /** POST /oauth/register: the client registered as public (any secret it asks for aside), or why not. */
  async register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await body(req, res);
    if (raw === undefined) return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return oauthError(res, 400, OAuthErrorCode.InvalidClientMetadata, 'the body is not JSON');
    }
    let m;
    try {
      m = checkedMetadata(json);
    } catch (e) {
      const redirect = /redirect_uris/.test((e as Error).message);
      return oauthError(
        res,
        400,
        redirect ? OAuthErrorCode.InvalidRedirectUri : OAuthErrorCode.InvalidClientMetadata,
        (e as Error).message,
      );
    }
    const { store } = this.ctx.o;
    const now = this.ctx.now();
    const later = { 'Retry-After': '600' };
    if (!this.registrations.take(addressOf(req), now))
      return oauthError(
        res,
        429,
        OAuthErrorCode.TemporarilyUnavailable,
        'too many registrations from here this hour; try again later',
        later,
      );
    if ((await store.clientsSince(new Date(now - HOUR_MS).toISOString())) >= REGISTRATIONS_PER_HOUR)
      return oauthError(res, 429, OAuthErrorCode.TemporarilyUnavailable, 'too many registrations this hour; try again later', later);
    const clientId = `wmc_${randomBytes(16).toString('hex')}`;
    const registered = {
      ...m,
      client_id: clientId,
      client_id_issued_at: Math.floor(now / 1000),
      token_endpoint_auth_method: 'none',
      grant_types: m.grant_types ?? ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
    await store.addClient(clientId, JSON.stringify(registered), new Date(now).toISOString());
    send(res, 201, 'application/json', JSON.stringify(registered), { ...CORS, ...NO_STORE });
  }

  /** The client a client_id names: registered here, or its metadata document's; throws ClientError saying why not. */
  async client(clientId: string): Promise<Client> {
    if (this.docs.isDocumentId(clientId)) return this.docs.client(clientId, this.ctx.now());
    const stored = await this.ctx.o.store.client(clientId);
    if (stored === undefined) throw new ClientError(`no client is registered as ${clientId}`);
    const m = JSON.parse(stored) as { client_name?: string; redirect_uris: string[] };
    return { client_id: clientId, client_name: m.client_name ?? 'An application', redirect_uris: m.redirect_uris };
  }
}
