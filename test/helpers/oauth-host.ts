/**
 * What an MCP host brings to an OAuth sign-in, for the tests that sign people in as a host
 * would: an OAuthClientProvider the SDK clients (v1 and v2) drive, that keeps what they give it
 * in memory and notes where they send the person; a loopback callback (RFC 8252: the
 * redirect_uri a native host listens on) that hears the code or the error; a Client ID Metadata
 * Document served over https on loopback (the SDKs take only an https `clientMetadataUrl`), with
 * a throwaway certificate the server under test is told to trust (NODE_EXTRA_CA_CERTS); and a
 * record of the requests the SDK makes to the token endpoint.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { join } from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { tempDir } from './temp.js';

type Info = Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
type Tokens = Awaited<ReturnType<OAuthClientProvider['tokens']>>;
type Discovery = Parameters<NonNullable<OAuthClientProvider['saveDiscoveryState']>>[0];

/** One person's sign-in state inside a host: a registration (or metadata document URL), tokens, the PKCE verifier. */
export class HostProvider implements OAuthClientProvider {
  private info: Info;
  private saved: Tokens;
  private verifier = '';
  private discovery?: Discovery;
  /** The state sent with the last authorization request. */
  sentState?: string;
  /** Every URL the SDK sent the person to, in order (the consent page). */
  readonly authorizations: URL[] = [];

  constructor(
    private readonly name: string,
    private readonly redirect: string,
    /** Set: the host names itself by this metadata document URL instead of registering. */
    readonly clientMetadataUrl?: string,
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return (this.sentState = randomBytes(16).toString('base64url'));
  }

  clientInformation(): Info {
    return this.info;
  }

  saveClientInformation(info: NonNullable<Info>): void {
    this.info = info;
  }

  tokens(): Tokens {
    return this.saved;
  }

  saveTokens(tokens: NonNullable<Tokens>): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizations.push(url);
  }

  saveCodeVerifier(v: string): void {
    this.verifier = v;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  /** What discovery found, kept with the verifier: the v2 SDK checks the callback's issuer against it. */
  saveDiscoveryState(state: Discovery): void {
    this.discovery = state;
  }

  discoveryState(): Discovery | undefined {
    return this.discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.info = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = '';
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }

  /** The client id the server knows this host by (a registered wmc_… or the document URL). */
  clientId(): string | undefined {
    return this.info?.client_id;
  }

  /** The last consent page URL the SDK asked the person to open. */
  lastAuthorization(): URL {
    const url = this.authorizations.at(-1);
    if (!url) throw new Error(`${this.name}: the client never sent the person to sign in`);
    return url;
  }
}

/** A request the SDK made to the token endpoint and what it was answered. */
export interface TokenCall {
  grantType: string | null;
  status: number;
  error?: string;
}

/** A fetch for the SDK's transports that notes every token endpoint call (nothing else changes). */
export function recordingFetch(calls: TokenCall[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.pathname === '/oauth/token') {
      const body = init?.body instanceof URLSearchParams ? init.body : new URLSearchParams(typeof init?.body === 'string' ? init.body : '');
      const answer = res.ok ? undefined : ((await res.clone().json()) as { error?: string }).error;
      calls.push({ grantType: body.get('grant_type'), status: res.status, ...(answer ? { error: answer } : {}) });
    }
    return res;
  };
}

export interface LoopbackHost {
  /** The redirect_uri: http://127.0.0.1:<port>/callback. */
  callback: string;
  /** Every query the callback heard, in order. */
  heard: URLSearchParams[];
  /** The metadata document's URL (https on loopback); it names `callback` as its redirect URI. */
  documentUrl: string;
  /** How many times the document was fetched. */
  documentFetches(): number;
  /** The certificate file the server must trust to fetch the document (for NODE_EXTRA_CA_CERTS). */
  caFile: string;
  close(): Promise<void>;
}

const listen = (server: Server) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });

const closing = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** A self-signed certificate for 127.0.0.1 (openssl): its key and certificate files. */
function loopbackCertificate(): { key: string; cert: string } {
  const dir = tempDir();
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { encoding: 'utf8' },
  );
  if (made.error || made.status !== 0)
    throw new Error(
      `openssl could not make the loopback certificate the metadata document is served with: ${made.error?.message ?? made.stderr.trim()}`,
    );
  return { key, cert };
}

/** The host's loopback pieces: the callback (http) and the metadata document (https). */
export async function startLoopbackHost(name = 'Loopback host'): Promise<LoopbackHost> {
  const heard: URLSearchParams[] = [];
  const callbackServer = createHttp((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return void res.writeHead(404).end();
    heard.push(url.searchParams);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Signed in</title><p>You can close this window and go back to the application.</p>');
  });
  const callback = `http://127.0.0.1:${await listen(callbackServer)}/callback`;
  const { key, cert } = loopbackCertificate();
  let fetches = 0;
  let documentUrl = '';
  const docServer = createHttps({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    if (new URL(req.url ?? '/', 'https://127.0.0.1').pathname !== '/client.json') return void res.writeHead(404).end();
    fetches++;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300' });
    res.end(
      JSON.stringify({
        client_id: documentUrl,
        client_name: `${name} (metadata document)`,
        redirect_uris: [callback],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    );
  });
  documentUrl = `https://127.0.0.1:${await listen(docServer)}/client.json`;
  return {
    callback,
    heard,
    documentUrl,
    documentFetches: () => fetches,
    caFile: cert,
    close: async () => {
      callbackServer.closeAllConnections();
      docServer.closeAllConnections();
      await Promise.all([closing(callbackServer), closing(docServer)]);
    },
  };
}
