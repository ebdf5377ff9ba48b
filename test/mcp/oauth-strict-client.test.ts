/**
 * `mcp --http --auth oauth` through a client we did not write: oauth4webapi, a spec-strict OAuth
 * 2.1 client (it refuses what the RFCs do not allow: an issuer that differs by a character, a
 * missing `iss` where the metadata promises one, a token answer without its fields or with the
 * wrong type). The whole flow as a host does it: the 401's challenge, RFC 9728 and RFC 8414
 * discovery, RFC 7591 registration, the code grant with PKCE S256 and the RFC 9207 `iss` check,
 * a call to /mcp with the access token, refresh token rotation and RFC 7009 revocation; and a
 * client named by its Client ID Metadata Document (https on loopback, test/helpers/oauth-host.ts). The
 * person's part, the consent form, is posted by the test (oauth-flow.ts). The built CLI on a
 * seeded SQLite file; Alice's key is alice-key, Bob's bob-key.
 */
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLoopbackHost, type LoopbackHost } from '../helpers/oauth-host.js';
import { consentForm, consentPost, http, REDIRECT, seedWorld, startOAuth, type OAuthRun } from './oauth-flow.js';

/** Our issuer is http://127.0.0.1:PORT: oauth4webapi asks for https unless told this. */
const insecure = { [oauth.allowInsecureRequests]: true } as const;

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth4webapi', version: '3' } },
});

/** An initialize request to /mcp with `token`, as oauth4webapi sends a protected resource request. */
function callMcp(run: OAuthRun, token: string): Promise<Response> {
  const headers = new Headers({ 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' });
  return oauth.protectedResourceRequest(token, 'POST', new URL(run.mcp), headers, INIT, insecure);
}

/** The error a promise is refused with. */
async function refusal(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('it was not refused');
}

/** A client as oauth4webapi knows it, and where it is sent back to. */
interface App {
  client: oauth.Client;
  redirect: string;
}

describe('--auth oauth with oauth4webapi, a spec-strict client', () => {
  let run: OAuthRun;
  let host: LoopbackHost;
  let as: oauth.AuthorizationServer;
  /** The client the first test registers. */
  let app: App;
  beforeAll(async () => {
    host = await startLoopbackHost('oauth4webapi');
    // The server trusts the loopback certificate the metadata document is served with, as it would
    // a public CA's (startOAuth hands the CLI this process's environment).
    process.env.NODE_EXTRA_CA_CERTS = host.caFile;
    try {
      run = await startOAuth(await seedWorld());
    } finally {
      delete process.env.NODE_EXTRA_CA_CERTS;
    }
  }, 60_000);
  afterAll(async () => {
    await run?.close();
    await host?.close();
  });

  /** The person's part: the authorization request built from the metadata, the consent form posted with `key` (or denied), the redirect validated. */
  async function consent(
    { client, redirect }: App,
    key: string,
    decision = 'allow',
  ): Promise<{ params: URLSearchParams; verifier: string }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirect,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      scope: 'workspace',
      resource: run.mcp,
    }).toString();
    const page = await http(url.href);
    expect(page.status, page.text).toBe(200);
    const back = await consentPost(run.base, consentForm(page), { key, decision });
    expect(back.status, back.text).toBe(302);
    // RFC 9207: the metadata says authorization_response_iss_parameter_supported, so iss must be there and be the issuer.
    return { params: oauth.validateAuthResponse(as, client, back.location!, state), verifier };
  }

  /** The person signs in with `key`, and the client redeems the code. */
  async function signIn(a: App, key: string): Promise<oauth.TokenEndpointResponse> {
    const { client } = a;
    const { params, verifier } = await consent(a, key);
    const answer = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, a.redirect, verifier, {
      additionalParameters: { resource: run.mcp },
      ...insecure,
    });
    expect(answer.headers.get('cache-control')).toBe('no-store');
    return oauth.processAuthorizationCodeResponse(as, client, answer);
  }

  test('discovery from the 401, registration, the code grant with PKCE and iss, a call to /mcp', async () => {
    // The 401's challenge names the protected resource metadata (RFC 9728 §5.1).
    const challenge = await refusal(callMcp(run, 'wmo_at_unknown'));
    expect(challenge).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const [bearer] = (challenge as oauth.WWWAuthenticateChallengeError).cause;
    expect(bearer).toMatchObject({ scheme: 'bearer', parameters: { error: 'invalid_token' } });
    expect(bearer!.parameters.resource_metadata).toBe(`${run.base}/.well-known/oauth-protected-resource/mcp`);

    // RFC 9728: the resource in the document is exactly the one asked about.
    const rs = await oauth.processResourceDiscoveryResponse(
      new URL(run.mcp),
      await oauth.resourceDiscoveryRequest(new URL(run.mcp), insecure),
    );
    expect(rs.authorization_servers).toEqual([run.base]);

    // RFC 8414: the issuer in the metadata is exactly the one its address was built from.
    const issuer = new URL(rs.authorization_servers![0]!);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    expect(as).toMatchObject({
      issuer: run.base,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
    });

    // RFC 7591: a public client.
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { client_name: 'oauth4webapi', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
        insecure,
      ),
    );
    expect(registered.token_endpoint_auth_method).toBe('none');
    expect(registered.client_secret).toBeUndefined();
    app = { client: { client_id: registered.client_id, token_endpoint_auth_method: 'none' }, redirect: REDIRECT };

    const tokens = await signIn(app, 'alice-key');
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'workspace', expires_in: 3600 });
    expect(tokens.refresh_token).toMatch(/^wmo_rt_/);

    const mcp = await callMcp(run, tokens.access_token);
    expect(mcp.status).toBe(200);
    expect(await mcp.text()).toMatch(/serverInfo/);
  });

  test('a Client ID Metadata Document client: its client_id the https URL of its document, no registration', async () => {
    expect(as, 'the first test discovers the server').toBeDefined();
    // What opencode and Codex check before they name themselves by a document.
    expect(as.client_id_metadata_document_supported).toBe(true);
    expect(as.token_endpoint_auth_methods_supported).toContain('none');
    const doc: App = { client: { client_id: host.documentUrl, token_endpoint_auth_method: 'none' }, redirect: host.callback };
    const tokens = await signIn(doc, 'bob-key');
    expect(host.documentFetches()).toBeGreaterThan(0);
    expect((await callMcp(run, tokens.access_token)).status).toBe(200);
  });

  test('the person denies: the error comes back with the state and iss, which the client checks before the error', async () => {
    expect(app, 'the first test registers the client').toBeDefined();
    const denied = await refusal(consent(app, '', 'deny'));
    expect(denied).toBeInstanceOf(oauth.AuthorizationResponseError);
    expect(denied).toMatchObject({ error: 'access_denied' });
  });

  test('refresh token rotation: a new pair each time, and the old refresh token used again ends the grant', async () => {
    expect(app, 'the first test registers the client').toBeDefined();
    const { client } = app;
    const first = await signIn(app, 'alice-key');
    const refresh = (token: string) =>
      oauth.refreshTokenGrantRequest(as, client, oauth.None(), token, { additionalParameters: { resource: run.mcp }, ...insecure });
    const second = await oauth.processRefreshTokenResponse(as, client, await refresh(first.refresh_token!));
    expect(second.refresh_token).toMatch(/^wmo_rt_/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await callMcp(run, second.access_token)).status).toBe(200);

    // RFC 9700 §4.14.2: the first refresh token again is a stolen copy; the grant stops, the new pair with it.
    const replay = await refusal(oauth.processRefreshTokenResponse(as, client, await refresh(first.refresh_token!)));
    expect(replay).toMatchObject({ error: 'invalid_grant', status: 400 });
    expect(await refusal(oauth.processRefreshTokenResponse(as, client, await refresh(second.refresh_token!)))).toMatchObject({
      error: 'invalid_grant',
    });
    expect(await refusal(callMcp(run, second.access_token))).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
  });

  test('revocation (RFC 7009): the refresh token revoked, neither it nor the access token works', async () => {
    expect(app, 'the first test registers the client').toBeDefined();
    const { client } = app;
    const tokens = await signIn(app, 'alice-key');
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, {
        additionalParameters: { token_type_hint: 'refresh_token' },
        ...insecure,
      }),
    );
    const refreshed = oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
    expect(await refusal(oauth.processRefreshTokenResponse(as, client, await refreshed))).toMatchObject({ error: 'invalid_grant' });
    const gone = await refusal(callMcp(run, tokens.access_token));
    expect(gone).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect((gone as oauth.WWWAuthenticateChallengeError).cause[0]!.parameters.error).toBe('invalid_token');
  });
});
