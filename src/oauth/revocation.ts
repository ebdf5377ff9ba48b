/**
 * RFC 7009 revocation: a token's whole grant stops (access and refresh tokens alike), when the
 * client that asks is the grant's or names none; the answer is 200 whether or not the token was
 * known, so it tells nothing about tokens.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuthTokenRevocationRequestSchema } from '@modelcontextprotocol/core';
import { OAuthErrorCode } from '@modelcontextprotocol/server';
import type { Context } from './context.js';
import { clientIdOf, CORS, formOf, NO_STORE, oauthError, send } from './replies.js';
import { hashToken } from './secrets.js';

/** POST /oauth/revoke: `token` (its `token_type_hint` read by the SDK's schema, and not needed: both kinds are looked up alike). */
export async function revoke(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await formOf(req, res);
  if (!form) return;
  const asked = OAuthTokenRevocationRequestSchema.safeParse({
    token: form.get('token') ?? undefined,
    token_type_hint: form.get('token_type_hint') ?? undefined,
  });
  if (!asked.success || !asked.data.token) return oauthError(res, 400, OAuthErrorCode.InvalidRequest, 'token is required');
  const { store } = ctx.o;
  const row = await store.token(hashToken(asked.data.token));
  const grant = row ? await store.grant(row.grant_id) : undefined;
  const clientId = clientIdOf(form, req) ?? null;
  if (grant && (clientId === null || clientId === grant.client_id))
    await store.revokeGrant(grant.id, 'revoked by the client', new Date(ctx.now()).toISOString());
  send(res, 200, 'application/json', '{}', { ...CORS, ...NO_STORE });
}
