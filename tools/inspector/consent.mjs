#!/usr/bin/env node
/**
 * The person's part of the OAuth sign-in that tools/inspector/run.sh has MCP Inspector's CLI
 * make, without a browser: serves the Inspector's Client ID Metadata Document on loopback (its
 * URL printed as the first line of stdout), waits for the authorization URL the Inspector prints
 * ("Please navigate to: URL", in the file `inspector-stderr`), fetches our consent page, posts it
 * back with `api-key` (its hidden fields and cookie, as a browser would) and follows the redirect
 * to the Inspector's callback listener, which then exchanges the code itself.
 *
 *   node tools/inspector/consent.mjs <callback-url> <inspector-stderr> <api-key>
 *
 * Prints `delivered` once the Inspector's listener took the code, and goes on serving the
 * document until it is ended (the server may read it again). On any other answer it exits 1 with
 * the reason on stderr, having sent the Inspector's listener an OAuth error, so that the
 * Inspector stops waiting too.
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

const [callbackUrl, inspectorLog, apiKey] = process.argv.slice(2);
if (!callbackUrl || !inspectorLog || !apiKey) {
  console.error('usage: consent.mjs <callback-url> <inspector-stderr> <api-key>');
  process.exit(2);
}

async function fail(why) {
  console.error(`consent: ${why}`);
  const stop = new URL(callbackUrl);
  stop.searchParams.set('error', 'access_denied');
  stop.searchParams.set('error_description', `consent.mjs: ${why}`);
  await fetch(stop).catch(() => {});
  process.exit(1);
}

const CLIENT_NAME = 'MCP Inspector (workspace-mcp CI)';
// The metadata document: its client_id is its own URL (as the server requires), a public client.
const docs = createServer((req, res) => {
  if (req.url !== '/client.json') return res.writeHead(404).end();
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(
    JSON.stringify({
      client_id: document,
      client_name: CLIENT_NAME,
      redirect_uris: [callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  );
});
await new Promise((resolve) => docs.listen(0, '127.0.0.1', resolve));
const document = `http://127.0.0.1:${docs.address().port}/client.json`;
process.stdout.write(`${document}\n`);

/** The authorization URL once the Inspector has printed it. */
async function authorizationUrl() {
  for (let i = 0; i < 600; i++) {
    let text = '';
    try {
      text = readFileSync(inspectorLog, 'utf8');
    } catch {
      // Not written yet.
    }
    const m = /Please navigate to: (\S+)/.exec(text);
    if (m) return new URL(m[1]);
    await new Promise((r) => setTimeout(r, 100));
  }
  return fail('the Inspector printed no authorization URL within 60 s');
}

/** A page's words, for a failure's reason. */
const textOf = (html) =>
  html
    .replace(/<(style|script)[\s\S]*?<\/\1>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);

const unescape = (s) => s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]);

/** The person's part: consent with the key, then the browser's redirect to the Inspector's listener. */
async function consent() {
  const authorize = await authorizationUrl();
  const clientId = authorize.searchParams.get('client_id');
  if (clientId !== document) await fail(`the Inspector signs in as ${clientId}, not as its metadata document`);
  const page = await fetch(authorize, { redirect: 'manual' });
  const html = await page.text();
  if (page.status !== 200) await fail(`the consent page answered ${page.status}: ${textOf(html)}`);
  const fields = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescape(m[1])] = unescape(m[2]);
  if (Object.keys(fields).length === 0) await fail('the consent page has no form');
  if (!html.includes(CLIENT_NAME)) await fail("the consent page does not name the metadata document's client");
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];

  const posted = await fetch(new URL('/oauth/authorize', authorize), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(cookie ? { Cookie: cookie } : {}) },
    body: new URLSearchParams({ ...fields, api_key: apiKey, decision: 'allow' }).toString(),
  });
  const location = posted.headers.get('location');
  if (posted.status !== 302 && posted.status !== 303)
    await fail(`the consent form answered ${posted.status}: ${textOf(await posted.text())}`);
  if (!location?.startsWith(callbackUrl)) await fail(`the consent form sent the browser to ${location}, not to the Inspector's callback`);
  if (!new URL(location).searchParams.get('code')) await fail(`the redirect carries no code: ${location}`);

  // The browser's last step: the Inspector's listener takes the code.
  const back = await fetch(location);
  await back.text();
  if (back.status !== 200) await fail(`the Inspector's callback answered ${back.status}`);
  process.stdout.write('delivered\n');
}

await consent().catch((e) => fail(e instanceof Error ? e.message : String(e)));
