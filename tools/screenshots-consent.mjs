#!/usr/bin/env node
/**
 * Screenshots of the OAuth consent page, run by hand after `npm run build`:
 *   node tools/screenshots-consent.mjs
 * writes docs/screenshots/consent-light.png, consent-dark.png (the system's dark theme) and
 * consent-wrong-key.png (after a wrong key), 800x700. It starts the built CLI with --auth oauth
 * on a throwaway SQLite file, registers a client named "Claude" as a host would, and opens
 * the authorization request in headless Chromium: CHROMIUM_PATH, or the one the browser tests
 * unpack from @sparticuz/chromium into node_modules/.cache (run test/apps/browser.test.ts once).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const SHOTS = join(ROOT, 'docs', 'screenshots');

/** CHROMIUM_PATH, or the packaged Chromium the browser tests unpacked, with its libraries and fonts. */
function browserToUse() {
  if (process.env.CHROMIUM_PATH) return { path: process.env.CHROMIUM_PATH, env: {}, headless: true };
  const cache = join(ROOT, 'node_modules', '.cache');
  const dir = existsSync(cache) ? readdirSync(cache).find((d) => /^sparticuz-chromium-[\d.]+$/.test(d)) : undefined;
  if (!dir) throw new Error('no browser: set CHROMIUM_PATH, or run the browser tests once (they unpack one into node_modules/.cache)');
  const at = join(cache, dir);
  return {
    path: join(at, 'chromium'),
    env: { LD_LIBRARY_PATH: join(at, 'al2023', 'lib'), FONTCONFIG_FILE: join(at, 'fonts.conf') },
    headless: 'shell',
  };
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

if (!existsSync(CLI)) throw new Error('dist/cli/main.js is missing: run npm run build first');
const dir = mkdtempSync(join(tmpdir(), 'consent-shots-'));
let server;
let browser;
try {
  const db = join(dir, 'workspace.db');
  writeFileSync(
    join(dir, 'world.json'),
    JSON.stringify({ owners: [{ id: 1, name: 'Dana', email: 'dana@example.com', plan: 'pro', api_key: 'dana-key' }] }),
  );
  const seeded = spawnSync(process.execPath, [CLI, 'seed', join(dir, 'world.json'), '--db', db], { encoding: 'utf8' });
  if (seeded.status !== 0) throw new Error(`seed failed: ${seeded.stderr}`);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, [CLI, 'mcp', '--http', '--auth', 'oauth', '--public-url', base, '--port', String(port), '--db', db], {
    env: { ...process.env, WORKSPACE_SECRET: randomBytes(32).toString('hex'), WORKSPACE_DATA_DIR: dir, WORKSPACE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => (out += d) && /\/mcp/.test(out) && resolve());
    server.once('exit', (code) => reject(new Error(`the server exited ${code}`)));
  });
  const redirect = 'http://127.0.0.1:33418/callback';
  const reg = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'Claude', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
  });
  if (reg.status !== 201) throw new Error(`registration answered ${reg.status}: ${await reg.text()}`);
  const { client_id } = await reg.json();
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id,
    redirect_uri: redirect,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    resource: `${base}/mcp`,
  }))
    url.searchParams.set(k, v);

  const found = browserToUse();
  browser = await puppeteer.launch({
    executablePath: found.path,
    headless: found.headless,
    args: ['--no-sandbox', '--disable-gpu', '--font-render-hinting=none'],
    env: { ...process.env, ...found.env },
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 800, height: 700, deviceScaleFactor: 1 });
  const shot = async (name) => {
    await page.screenshot({ path: join(SHOTS, `consent-${name}.png`) });
    process.stderr.write(`wrote docs/screenshots/consent-${name}.png\n`);
  };
  await page.goto(url.href);
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
  await shot('light');
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  await shot('dark');
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
  await page.type('input[name=api_key]', 'not-my-key');
  await Promise.all([page.waitForNavigation(), page.click('button[name=decision][value=allow]')]);
  await shot('wrong-key');
} finally {
  await browser?.close();
  server?.kill();
  rmSync(dir, { recursive: true, force: true });
}
