#!/usr/bin/env node
// The person in the conformance suite's `authorization` run, for tools/conformance/run.sh.
// The suite's authorization-code-grant scenario prints an authorization URL ("Access the following
// URL in your browser") and waits for the browser to come back to its callback server at
// http://127.0.0.1:PORT/callback. Our consent page is a form where the person pastes a Workspace
// API key, so this script does what the browser and the person do: GET the URL, read the form's
// hidden fields and its CSRF cookie, POST them back with the key (Origin: the issuer, as a browser
// sends it), and follow the 302 to the callback. On any fault it sends the callback an error
// instead, so the suite ends at once with a failure rather than waiting its five minutes.
//
//   node sign-in.mjs register ISSUER CALLBACK_PORT    prints a public client's client_id (RFC 7591)
//   node sign-in.mjs consent SUITE_OUTPUT API_KEY     waits for the URL in the suite's output file
//   node sign-in.mjs verdict RESULTS BASELINE         the suite's checks.json files against a baseline
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const [command, ...args] = process.argv.slice(2);

/** POST /oauth/register: a public client whose one redirect URI is the suite's callback. */
async function register(issuer, port) {
  const metadata = await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json();
  const res = await fetch(metadata.registration_endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_name: 'MCP conformance suite',
      redirect_uris: [`http://127.0.0.1:${port}/callback`],
      token_endpoint_auth_method: 'none',
    }),
  });
  if (res.status !== 201) throw new Error(`registration: ${res.status} ${await res.text()}`);
  console.log((await res.json()).client_id);
}

/** The authorization URL the suite prints, once it has (two minutes at most). */
async function urlFrom(file) {
  for (let i = 0; i < 1200; i++) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {}
    const m = /in your browser[^\n]*\n(\S+)/.exec(text);
    if (m) return new URL(m[1]);
    // The suite ended without asking (an earlier scenario failed, or the metadata was refused).
    if (/^Total: /m.test(text)) return undefined;
    await sleep(100);
  }
  throw new Error(`the suite printed no authorization URL in ${file}`);
}

/** What a page says: the consent page's problem, else its text without tags, style and head (a refusal's reason, for the log). */
const said = (html) =>
  /<p class="problem"[^>]*>([^<]*)</.exec(html)?.[1] ??
  html
    .replace(/<head>[\s\S]*<\/head>/, '')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 400);

const unescape = (s) => s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]);

/** The consent page, its form posted back with `key`: where the server sends the browser next. */
async function consentTo(url, key) {
  const page = await fetch(url, { redirect: 'manual' });
  const html = await page.text();
  if (page.status !== 200) throw new Error(`the consent page: ${page.status} ${said(html)}`);
  const fields = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescape(m[1])] = unescape(m[2]);
  const action = /<form[^>]*action="([^"]*)"/.exec(html)?.[1];
  // No action: a browser posts the form to the page's own address, query and all.
  const back = await fetch(action ? new URL(unescape(action), url) : url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Origin: url.origin,
      Cookie: (page.headers.get('set-cookie') ?? '').split(';')[0],
    },
    body: new URLSearchParams({ ...fields, api_key: key, decision: 'allow' }).toString(),
  });
  const location = back.headers.get('location');
  if (back.status !== 302 || !location) throw new Error(`the consent form: ${back.status} ${said(await back.text())}`);
  return new URL(location, url);
}

async function consent(file, key) {
  const url = await urlFrom(file);
  if (!url) return;
  try {
    const callback = await consentTo(url, key);
    // The suite prints the URL as its callback server starts listening: a refusal is tried again.
    for (let i = 0; ; i++) {
      try {
        await fetch(callback);
        break;
      } catch (e) {
        if (i === 20) throw e;
        await sleep(100);
      }
    }
  } catch (e) {
    // The suite's callback, told what went wrong: it fails the scenario and ends now.
    const redirect = new URL(url.searchParams.get('redirect_uri'));
    redirect.search = new URLSearchParams({ error: 'access_denied', error_description: `sign-in.mjs: ${e.message}` }).toString();
    await fetch(redirect).catch(() => {});
    throw e;
  }
}

/** Every checks.json under `dir`, with its scenario (the folder's name without its time). */
function results(dir) {
  const out = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    const scenario = d.name.replace(/^authorization-server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    out.push({ scenario, checks: JSON.parse(readFileSync(join(dir, d.name, 'checks.json'), 'utf8')) });
  }
  return out;
}

/**
 * The suite's `authorization` command takes no --expected-failures (its `server` and `client`
 * commands do), so the same rule is applied here: a FAILURE, WARNING or SKIPPED not in the baseline, or a
 * baseline entry (`scenario` or `scenario:check-id`) that passes, fails the run.
 */
function verdict(dir, baselineFile) {
  const baseline = readFileSync(baselineFile, 'utf8')
    .split('\n')
    .map((l) => /^\s+-\s+(\S+)/.exec(l)?.[1])
    .filter(Boolean);
  const ran = results(dir);
  // SKIPPED too: the code grant skips itself without a client id or an auth method it knows.
  const bad = (c) => ['FAILURE', 'WARNING', 'SKIPPED'].includes(c.status);
  const unexpected = [];
  const stale = [];
  let passed = 0;
  for (const { scenario, checks } of ran) {
    for (const c of checks) {
      const listed = baseline.includes(scenario) || baseline.includes(`${scenario}:${c.id}`);
      if (bad(c) && !listed) unexpected.push(`${scenario}:${c.id} ${c.status} ${c.errorMessage ?? ''}`);
      if (c.status === 'SUCCESS') passed++;
    }
  }
  for (const entry of baseline) {
    const [scenario, id] = entry.split(':');
    const checks = ran.find((r) => r.scenario === scenario)?.checks.filter((c) => id === undefined || c.id === id) ?? [];
    if (checks.length > 0 && !checks.some(bad)) stale.push(entry);
  }
  const scenarios = ran.map((r) => r.scenario).sort();
  for (const u of unexpected) console.log(`  unexpected: ${u}`);
  for (const s of stale) console.log(`  passes, remove it from the baseline: ${s}`);
  console.log(`scenarios ${scenarios.join(', ')}; ${passed} checks passed, ${baseline.length} baselined`);
  if (ran.length === 0 || unexpected.length > 0 || stale.length > 0) process.exitCode = 1;
}

try {
  if (command === 'register') await register(args[0], args[1]);
  else if (command === 'consent') await consent(args[0], args[1]);
  else if (command === 'verdict') verdict(args[0], args[1]);
  else throw new Error(`usage: sign-in.mjs register|consent|verdict ...`);
} catch (e) {
  console.error(`sign-in.mjs ${command}: ${e.message}`);
  process.exitCode = 1;
}
