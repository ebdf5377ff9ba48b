/**
 * The OAuth consent page (issue 48) as a person uses it, in real headless Chromium (found by
 * test/helpers/browser.ts; when none starts the suite fails and says why, it is never skipped):
 * the built CLI with `--auth oauth` on a seeded world, a client registered with a loopback
 * redirect URI this file serves, and the page opened at its authorization URL. The page has no
 * script, a label and an accessible name for each box, read required; the person unticks two
 * boxes by their labels, types their key and presses Allow; the browser lands on the client's
 * redirect URI and the code's token holds what was left ticked. A request asking less shows
 * the others disabled; the page follows the system's light or dark theme.
 *
 * With WORKSPACE_SCREENSHOTS=1 it also writes docs/consent-all.png, docs/consent-narrowed.png
 * and docs/consent-dark.png (left alone otherwise, so a run never rewrites tracked files).
 */
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page, SerializedAXNode } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { SCOPE_WORDS, SCOPES } from '../../src/oauth/scopes.js';
import { launchBrowser } from '../helpers/browser.js';
import { authorizeParams, exchange, pkce, register, seedWorld, startOAuth, type OAuthRun } from '../mcp/oauth-flow.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const DOCS = join(HERE, '..', '..', 'docs');
const SHOOT = process.env.WORKSPACE_SCREENSHOTS === '1';
// The callbacks given to page.evaluate run in the browser; the tests are type-checked without
// the DOM library (it clashes with Node's), so its names are loose here.
declare const document: any;
declare function getComputedStyle(e: unknown): any;

let browser: Browser;
let run: OAuthRun;
let callback: Server;
/** The client's redirect URI: a loopback address served by `callback`. */
let redirectUri: string;
/** Every request the client's redirect URI received. */
const arrived: URL[] = [];
let clientId: string;
const pages: Page[] = [];
/** Script errors and refused loads in any page since the last test. */
const errors: string[] = [];

beforeAll(async () => {
  browser = (await launchBrowser()).browser;
  run = await startOAuth(await seedWorld());
  callback = createServer((req, res) => {
    arrived.push(new URL(req.url ?? '/', redirectUri));
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Signed in</title><p>You may close this window.</p>');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(callback.address() as { port: number }).port}/callback`;
  clientId = await register(run.base, [redirectUri], 'Consent Test App');
}, 90_000);

afterEach(async () => {
  for (const p of pages.splice(0)) await p.close();
  const seen = errors.splice(0);
  expect(seen, 'the browser reported errors').toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await run?.close();
  await new Promise<void>((resolve) => (callback ? callback.close(() => resolve()) : resolve()));
});

/** A new page of 640 CSS pixels wide, in `theme`, its errors collected. */
async function newPage(theme: 'light' | 'dark' = 'light'): Promise<Page> {
  const page = await browser.newPage();
  pages.push(page);
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.setViewport({ width: 640, height: 900, deviceScaleFactor: 1 });
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: theme }]);
  return page;
}

/** Open the consent page of an authorization request asking `scope`; its PKCE verifier and state. */
async function openConsent(page: Page, scope: string): Promise<{ verifier: string; state: string }> {
  const { verifier, challenge } = pkce();
  const params = authorizeParams(run.base, clientId, challenge, { scope, redirect_uri: redirectUri });
  const res = await page.goto(`${run.base}/oauth/authorize?${new URLSearchParams(params)}`);
  expect(res?.status()).toBe(200);
  return { verifier, state: params.state! };
}

interface Box {
  value: string;
  checked: boolean;
  required: boolean;
  disabled: boolean;
  /** The text of the labels the browser ties to the box (input.labels). */
  labels: string[];
}

/** The scope boxes as the browser holds them now. */
function boxes(page: Page): Promise<Box[]> {
  return page.$$eval('input[type=checkbox][name=scope]', (inputs: any[]) =>
    inputs.map((i) => ({
      value: i.value,
      checked: i.checked,
      required: i.required,
      disabled: i.disabled,
      labels: [...i.labels].map((l: any) => l.textContent.trim()),
    })),
  );
}

/** Which boxes are ticked now. */
async function ticked(page: Page): Promise<string[]> {
  return (await boxes(page)).filter((b) => b.checked).map((b) => b.value);
}

/** The checkboxes of the page's accessibility tree (what a screen reader is told). */
async function axCheckboxes(page: Page): Promise<SerializedAXNode[]> {
  const found: SerializedAXNode[] = [];
  const walk = (n: SerializedAXNode | null | undefined) => {
    if (!n) return;
    if (n.role === 'checkbox') found.push(n);
    for (const c of n.children ?? []) walk(c);
  };
  walk(await page.accessibility.snapshot({ interestingOnly: false }));
  return found;
}

const label = (s: string) => `label[for="scope-${s.split(':')[1]}"]`;

/** sRGB relative luminance of a computed `rgb(...)` color (WCAG 2). */
function luminance(rgb: string): number {
  const [r, g, b] = (rgb.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}
const contrast = (a: string, b: string) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
};

describe('the consent page in real Chromium', () => {
  test('asked for everything: four labelled boxes all ticked, read required, no script, each box named for a screen reader', async () => {
    const page = await newPage();
    await openConsent(page, 'workspace');
    expect(await page.title()).toBe('Sign in to your Workspace');
    expect(await page.$$eval('script', (s: any[]) => s.length)).toBe(0);
    // Script-free as a browser sees it too: nothing the page runs, inline handlers included.
    expect(
      await page.$$eval('*', (all: any[]) => all.flatMap((e) => [...e.attributes].map((a: any) => a.name)).filter((n) => /^on/i.test(n))),
    ).toEqual([]);
    expect(await page.$eval('h1', (h: any) => h.textContent)).toBe('Allow Consent Test App to use your Workspace?');
    expect(await boxes(page)).toEqual(
      SCOPES.map((s) => ({ value: s, checked: true, required: s === 'workspace:read', disabled: false, labels: [SCOPE_WORDS[s]] })),
    );
    // Each box drawn at its full size (1rem), however long its words: none squeezed by the row.
    expect(
      await page.$$eval('input[name=scope]', (inputs: any[]) =>
        inputs.map((i) => {
          const r = i.getBoundingClientRect();
          return [r.width, r.height];
        }),
      ),
    ).toEqual(SCOPES.map(() => [16, 16]));
    // The fieldset's legend groups them.
    expect(await page.$eval('fieldset legend', (l: any) => l.textContent)).toBe('What it may do');
    // The accessibility tree: each box a checkbox named by its label, ticked. Chromium's tree
    // carries no "required" for a checkbox (not even with aria-required): read's own words,
    // "(always granted)", are what tell a screen reader's user it stays.
    const ax = await axCheckboxes(page);
    expect(ax.map((n) => [n.name, n.checked, n.disabled ?? false])).toEqual(SCOPES.map((s) => [SCOPE_WORDS[s], true, false]));
    expect(ax[0]!.name).toMatch(/\(always granted\)$/);
    // The key field is named too, and the two buttons.
    const named = await page.accessibility.snapshot({ interestingOnly: true });
    const flat: SerializedAXNode[] = [];
    const walk = (n: SerializedAXNode | null | undefined) => n && (flat.push(n), (n.children ?? []).forEach(walk));
    walk(named);
    expect(flat.find((n) => n.role === 'textbox')?.name).toBe('Your Workspace API key');
    expect(flat.filter((n) => n.role === 'button').map((n) => n.name)).toEqual(['Allow', 'Deny']);

    // Read cannot be given up: unticked, the browser itself refuses to send the form (it is required).
    await page.click(label('workspace:read'));
    expect(await ticked(page)).not.toContain('workspace:read');
    await page.type('#api_key', 'alice-key');
    const before = page.url();
    await page.click('button.allow');
    await new Promise((r) => setTimeout(r, 300));
    expect(page.url()).toBe(before);
    expect(await page.$eval('#scope-read', (i: any) => [i.validity.valueMissing, i.form.checkValidity()])).toEqual([true, false]);
    expect(arrived).toEqual([]);
    await page.click(label('workspace:read'));
    expect(await ticked(page)).toEqual([...SCOPES]);

    if (SHOOT) {
      await page.$eval('#api_key', (i: any) => (i.value = ''));
      await page.screenshot({ path: join(DOCS, 'consent-all.png'), fullPage: true });
    }
  });

  test('a person unticks Move money and Send messages by their labels, types the key, presses Allow: back at the client with read and write', async () => {
    const page = await newPage();
    const { verifier, state } = await openConsent(page, 'workspace');
    await page.click(label('workspace:money'));
    await page.click(label('workspace:message'));
    expect(await ticked(page)).toEqual(['workspace:read', 'workspace:write']);
    expect((await axCheckboxes(page)).map((n) => n.checked)).toEqual([true, true, false, false]);
    // Pressing a label again ticks its box back, and again unticks it.
    await page.click(label('workspace:money'));
    expect(await ticked(page)).toContain('workspace:money');
    await page.click(label('workspace:money'));
    expect(await ticked(page)).toEqual(['workspace:read', 'workspace:write']);
    await page.click('#api_key');
    await page.keyboard.type('alice-key');
    if (SHOOT) await page.screenshot({ path: join(DOCS, 'consent-narrowed.png'), fullPage: true });

    // What the browser sends: one scope field per ticked box, the key, allow.
    const sent: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') sent.push(r.postData() ?? '');
    });
    await Promise.all([page.waitForNavigation(), page.click('button.allow')]);
    expect(sent).toHaveLength(1);
    const body = new URLSearchParams(sent[0]);
    expect(body.getAll('scope')).toEqual(['workspace:read', 'workspace:write']);
    expect([body.get('api_key'), body.get('decision')]).toEqual(['alice-key', 'allow']);

    // The browser followed the redirect to the client's own address.
    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(redirectUri);
    expect(landed.searchParams.get('state')).toBe(state);
    expect(await page.$eval('p', (p: any) => p.textContent)).toBe('You may close this window.');
    expect(arrived.map((u) => u.href)).toEqual([landed.href]);
    arrived.length = 0;

    const code = landed.searchParams.get('code')!;
    expect(code).toBeTruthy();
    const t = await exchange(run.base, { code, code_verifier: verifier, client_id: clientId, redirect_uri: redirectUri });
    expect(t.status).toBe(200);
    const token = JSON.parse(t.text) as { scope: string; access_token: string; token_type: string };
    expect(token.scope).toBe('workspace:read workspace:write');
    expect(token.access_token).toBeTruthy();
  });

  test('asked for read and money only: those two ticked, write and message disabled, named as not asked for', async () => {
    const page = await newPage();
    await openConsent(page, 'workspace:read workspace:money');
    const not = (s: keyof typeof SCOPE_WORDS) => `${SCOPE_WORDS[s]} (not asked for)`;
    expect(await boxes(page)).toEqual([
      { value: 'workspace:read', checked: true, required: true, disabled: false, labels: [SCOPE_WORDS['workspace:read']] },
      { value: 'workspace:write', checked: false, required: false, disabled: true, labels: [not('workspace:write')] },
      { value: 'workspace:money', checked: true, required: false, disabled: false, labels: [SCOPE_WORDS['workspace:money']] },
      { value: 'workspace:message', checked: false, required: false, disabled: true, labels: [not('workspace:message')] },
    ]);
    expect((await axCheckboxes(page)).map((n) => [n.name, n.checked, n.disabled ?? false])).toEqual([
      [SCOPE_WORDS['workspace:read'], true, false],
      [not('workspace:write'), false, true],
      [SCOPE_WORDS['workspace:money'], true, false],
      [not('workspace:message'), false, true],
    ]);
    // A person cannot tick what was not asked for.
    await page.click(label('workspace:write'));
    await page.click(label('workspace:message'));
    expect(await ticked(page)).toEqual(['workspace:read', 'workspace:money']);
  });

  test('light and dark follow the system; text stays readable in both', async () => {
    const look = async (theme: 'light' | 'dark') => {
      const page = await newPage(theme);
      await openConsent(page, 'workspace:read workspace:money');
      const colors = await page.evaluate(() => {
        const css = (sel: string, prop: string) => getComputedStyle(document.querySelector(sel))[prop] as string;
        return {
          body: css('body', 'backgroundColor'),
          main: css('main', 'backgroundColor'),
          text: css('h1', 'color'),
          box: css('label[for=scope-money] span', 'color'),
          disabled: css('label[for=scope-write] span', 'color'),
          hint: css('#key-hint', 'color'),
          scheme: css(':root', 'colorScheme'),
        };
      });
      return { page, colors };
    };
    const light = await look('light');
    const dark = await look('dark');
    expect([light.colors.scheme, dark.colors.scheme]).toEqual(['light', 'dark']);
    expect(dark.colors.body).not.toBe(light.colors.body);
    expect(dark.colors.main).not.toBe(light.colors.main);
    expect(dark.colors.text).not.toBe(light.colors.text);
    // Dark is dark: its card darker than light's.
    expect(luminance(dark.colors.main)).toBeLessThan(luminance(light.colors.main));
    for (const { colors } of [light, dark]) {
      // WCAG AA for body text (4.5:1), the disabled boxes' words and the hint included.
      for (const fg of [colors.text, colors.box, colors.disabled, colors.hint])
        expect(contrast(fg, colors.main)).toBeGreaterThanOrEqual(4.5);
    }
    if (SHOOT) {
      const page = await newPage('dark');
      await openConsent(page, 'workspace');
      await page.screenshot({ path: join(DOCS, 'consent-dark.png'), fullPage: true });
    }
  });
});
