/**
 * The MCP Apps views as a person sees them: a test host page (test/apps/host.ts, the ext-apps
 * AppBridge) in real headless Chromium (driven by puppeteer-core; test/helpers/browser.ts finds
 * it: CHROMIUM_PATH, one installed here, or the one inside the @sparticuz/chromium package) embeds
 * each view in a sandboxed frame and speaks the MCP Apps messages to the real server, through an
 * MCP client that declared MCP Apps. Each view gets a real tool result; the test reads what it
 * renders, clicks next page, and clicks Confirm: the money moves once and the journal shows it.
 * With SCREENSHOTS=1 it also writes docs/screenshots/*.png (light, dark).
 *
 * Chromium must start: when it cannot, the suite fails and says why (it is never skipped).
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser, Frame, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { COMMIT_TOOL, UI_EXTENSION, UI_MIME } from '../../src/mcp/composite/apps.js';
import { connectInMemory, type McpClient } from '../mcp/clients.js';
import { startMcp, type McpWorld } from '../mcp/harness.js';
import { launchBrowser } from '../helpers/browser.js';
import { demoFixture } from '../helpers/world.js';
import { queryRows } from '../helpers/store.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const SHOTS = join(HERE, '..', '..', 'docs', 'screenshots');
const HOST_CAPS = { extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME] } } };
type Theme = 'light' | 'dark';
// The callbacks given to page.evaluate and frame.$eval run in the browser; the tests are
// type-checked without the DOM library (it clashes with Node's), so its names are loose here.
declare const window: any;
declare const document: any;
declare function getComputedStyle(e: unknown): any;

let browser: Browser;
let page: Page;
let world: McpWorld;
let host: McpClient;
/** The list the List view's test makes (the narrow test shows it again). */
let listId: string | undefined;
/** Every request a view sent through the host, in order. */
const forwarded: Array<{ method: string; params: any }> = [];
/** Script errors in the browser since the last test. */
const errors: string[] = [];

beforeAll(async () => {
  browser = (await launchBrowser()).browser;
  const script = (
    await build({
      entryPoints: [join(HERE, 'host.ts')],
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    })
  ).outputFiles[0]!.text;
  // Alice-era accounts are too small for a screenshot: the demo world (Dana's coffee shop), caps at 20.00 a call.
  world = await startMcp({ fixture: demoFixture(), money: { maxAmount: { '*': '20.00' } } });
  host = await connectInMemory('2025-11-25', world.factory, { capabilities: HOST_CAPS });
  page = await browser.newPage();
  // A script error in the host page or a view fails the test that caused it (see afterEach).
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.setViewport({ width: 900, height: 900, deviceScaleFactor: 1 });
  await page.exposeFunction('mcpRequest', async (method: string, params: any) => {
    forwarded.push({ method, params });
    if (method === 'tools/call') return host.callTool(params);
    if (method === 'resources/read') return host.readResource(params);
    throw new Error(`the test host does not forward ${method}`);
  });
  await page.setContent(
    `<!doctype html><html><head><meta charset="utf-8"><style>body{margin:0;padding:16px;background:#fafafa}` +
      `body[data-theme=dark]{background:#0f0f10}iframe{display:block;border:0;max-width:100%}</style></head>` +
      `<body><div id="host"></div><script>${script.replace(/<\/script/gi, '<\\/script')}</script></body></html>`,
  );
}, 60_000);

afterEach(() => {
  expect(errors.splice(0)).toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await host?.close();
  await world?.close();
});

/** Call `tool` for real and show its result in its view, as a host would; the view's frame. */
async function open(tool: string, args: Record<string, unknown>, o: { theme?: Theme; width?: number } = {}): Promise<Frame> {
  const def = (await host.listTools()).tools.find((t) => t.name === tool)!;
  const uri = (def._meta as { ui: { resourceUri: string } }).ui.resourceUri;
  const html = (await host.readResource({ uri })).contents[0] as { text: string };
  const result = await host.callTool({ name: tool, arguments: args });
  const mount = { html: html.text, tool: def, args, result, theme: o.theme ?? 'light', width: o.width ?? 820 };
  await page.evaluate((m) => window.mountView(m as never), mount as never);
  const frame = (await (await page.$('#view'))!.contentFrame())!;
  await frame.waitForFunction(() => document.getElementById('status')?.textContent !== 'Waiting for the tool result…');
  return frame;
}

/** The text of every cell of the rows under `selector`. */
function cells(frame: Frame, selector: string): Promise<string[][]> {
  return frame.$$eval(selector, (rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td: any) => String(td.textContent ?? ''))));
}

/** The view's frame as a picture, in both themes (the host switches its theme live). */
async function screenshots(frame: Frame, name: string): Promise<void> {
  const bg: Record<Theme, string> = { light: '', dark: '' };
  for (const theme of ['light', 'dark'] as const) {
    await page.evaluate((t) => window.setTheme(t), theme);
    await frame.waitForFunction((t) => document.documentElement.dataset.theme === t, {}, theme);
    bg[theme] = await frame.evaluate(() => getComputedStyle(document.body).backgroundColor);
    if (process.env.SCREENSHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      await new Promise((r) => setTimeout(r, 100));
      await (await page.$('#view'))!.screenshot({ path: join(SHOTS, `${name}-${theme}.png`) as `${string}.png` });
    }
  }
  // The view follows the host's theme: a light page, then a dark one.
  expect(bg.light).toBe('rgb(255, 255, 255)');
  expect(bg.dark).toBe('rgb(24, 24, 27)');
  // The host sized the frame to the view's content (ui/notifications/size-changed), no taller.
  const content = await frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
  expect(await page.$eval('#view', (f: any) => f.getBoundingClientRect().height)).toBe(content);
}

describe('Contacts view', () => {
  test('a getContacts page as a table with balances; Next fetches page 2 through the host; a header click sorts', async () => {
    const frame = await open('getContacts', { bot_id: 11, count: 10 });
    const api = (n: number) => host.callTool({ name: 'getContacts', arguments: { bot_id: 11, count: 10, page: n } });
    const page1 = (await api(1)).structuredContent as { data: Array<{ name: string }>; meta: { last_page: number; total: number } };
    // Balances are read per row with getContactAccounts: wait until none is pending.
    await frame.waitForFunction(() => [...document.querySelectorAll('td.balance')].every((td: any) => td.textContent !== '…'));
    const rows = await cells(frame, 'tbody tr');
    expect(rows.map((r) => r[0])).toEqual(page1.data.map((c) => c.name));
    const anna = rows.find((r) => r[0] === 'Anna Smith')!;
    expect(anna).toEqual(['Anna Smith', 'telegram', '@anna_s', '+447700900123', 'viplatte', '25.00 USD, 0.00 EUR']);
    expect(await frame.$eval('#where', (e) => e.textContent)).toBe(`Page 1 of ${page1.meta.last_page} · ${page1.meta.total} contacts`);
    await screenshots(frame, 'contacts');

    await frame.click('#next');
    await frame.waitForFunction(() => document.getElementById('where')?.textContent?.startsWith('Page 2 '));
    const page2 = (await api(2)).structuredContent as { data: Array<{ name: string }> };
    expect((await cells(frame, 'tbody tr')).map((r) => r[0])).toEqual(page2.data.map((c) => c.name));
    const calls = forwarded.filter((f) => f.params?.name === 'getContacts');
    expect(calls.at(-1)!.params.arguments).toEqual({ bot_id: 11, count: 10, page: 2 });

    await frame.click('button[data-sort="name"]');
    const sorted = (await cells(frame, 'tbody tr')).map((r) => r[0]!);
    expect(sorted).toEqual([...sorted].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' })));
    await frame.click('button[data-sort="name"]');
    expect((await cells(frame, 'tbody tr')).map((r) => r[0])).toEqual([...sorted].reverse());
    expect(await frame.$eval('th[aria-sort="descending"]', (e) => e.textContent)).toMatch(/^Name/);
  });

  test('findContacts hits come with their balances; at 360 px the rows stack and nothing scrolls sideways', async () => {
    const frame = await open('findContacts', { query: 'Anna' }, { width: 360 });
    const rows = await cells(frame, 'tbody tr');
    expect(rows[0]).toEqual(['Anna Smith', 'telegram', '@anna_s', '+447700900123', 'viplatte', '25.00 USD, 0.00 EUR']);
    expect(await frame.$eval('#where', (e) => e.textContent)).toMatch(/ found for “Anna”$/);
    expect(await frame.$eval('#next', (e) => (e as any).disabled)).toBe(true);
    const layout = await frame.evaluate(() => ({
      overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      head: getComputedStyle(document.querySelector('thead')!).display,
    }));
    expect(layout).toEqual({ overflow: 0, head: 'none' });
    await screenshots(frame, 'contacts-narrow');
  });
});

describe('Account view', () => {
  test('balances in major units; Confirm on the confirm card moves money over the cap exactly once, and the journal shows it', async () => {
    const frame = await open('getContactAccounts', { contact_id: 1001 });
    await frame.waitForFunction(() => document.getElementById('title')?.textContent === 'Anna Smith · accounts');
    expect(await frame.$$eval('.balance', (els) => els.map((e) => e.textContent))).toEqual(['25.00 USD', '0.00 EUR']);
    await frame.waitForFunction(() => !document.getElementById('journal')?.textContent?.includes('Loading'));
    const journalBefore = world.store.admin.journal(501)!.length;

    // 50.00 is over this server's cap of 20.00 a call: only a person's click may move it.
    await frame.type('#amount', '50');
    await frame.type('#description', 'Birthday bonus');
    await frame.click('#review');
    await frame.waitForSelector('#confirm-card');
    expect(await frame.$eval('#confirm-card', (e) => e.textContent)).toContain('Top up Anna Smith’s USD account by 50.00 USD?');
    expect(await frame.$eval('#confirm-card', (e) => e.textContent)).toContain('balance after: 75.00 USD');
    expect(forwarded.some((f) => f.params?.name === COMMIT_TOOL)).toBe(false);
    await screenshots(frame, 'account-confirm');
    await page.evaluate(() => window.setTheme('light'));

    // Two clicks in a row (an impatient person): one move.
    await frame.$eval('#confirm', (b) => {
      (b as any).click();
      (b as any).click();
    });
    await frame.waitForSelector('#outcome');
    expect(await frame.$eval('#outcome', (e) => e.textContent)).toBe('Done. The USD balance is now 75.00 USD.');
    await frame.waitForFunction(() => document.querySelectorAll('#journal tr.move').length > 0);
    expect(await frame.$$eval('.balance', (els) => els.map((e) => e.textContent))).toEqual(['75.00 USD', '0.00 EUR']);
    const moves = await cells(frame, '#journal tr.move');
    expect(moves[0]!.slice(1)).toEqual(['+50.00 USD', 'Birthday bonus', 'app view']);

    const commits = forwarded.filter((f) => f.params?.name === COMMIT_TOOL);
    expect(commits).toHaveLength(1);
    expect(commits[0]!.params.arguments).toMatchObject({ move: 'add', account_id: 501, amount: 5000, description: 'Birthday bonus' });
    expect(commits[0]!.params.arguments.idempotency_key).toMatch(/^view-[0-9a-f]{32}$/);
    const journal = world.store.admin.journal(501)!;
    expect(journal).toHaveLength(journalBefore + 1);
    expect(journal.at(-1)).toMatchObject({ amount: 5000, description: 'Birthday bonus' });
    // The same key again (a retry the host might make) is a replay: no second move.
    const replay = await host.callTool({ name: COMMIT_TOOL, arguments: commits[0]!.params.arguments });
    expect(replay.structuredContent).toMatchObject({ replayed: true, data: { amount: 7500 } });
    expect(world.store.admin.journal(501)).toHaveLength(journalBefore + 1);
    await screenshots(frame, 'account');
  });

  test('amounts in the minor units the server counts: an IQD balance has three decimals, as ISO 4217 says (not the browser\u2019s none)', async () => {
    const made = await host.callTool({ name: 'addContactAccount', arguments: { contact_id: 1008, currency: 'IQD' } });
    const id = (made.structuredContent as any).data.id as number;
    await host.callTool({ name: 'addFundsToContactAccount', arguments: { account_id: id, amount: 1500, description: 'IQD check' } });
    const frame = await open('getContactAccounts', { contact_id: 1008 });
    await frame.waitForSelector('.balance');
    expect(await frame.$$eval('.balance', (els) => els.map((e) => e.textContent))).toContain('1.500 IQD');
  });

  test('a refused withdrawal shows the API\u2019s reason and moves nothing', async () => {
    const frame = await open('getContactAccounts', { contact_id: 1008 });
    await frame.waitForSelector('#amount');
    const before = world.store.admin.journal(505)!.length;
    await frame.select('#move', 'withdraw');
    await frame.type('#amount', '5000');
    await frame.click('#review');
    await frame.waitForSelector('#confirm-card');
    expect(await frame.$eval('#confirm-card', (e) => e.textContent)).toContain('by 5,000 JPY?'.replace(',', '\u202f'));
    await frame.click('#confirm');
    await frame.waitForSelector('#outcome.error');
    expect(await frame.$eval('#outcome', (e) => e.textContent)).toMatch(/insufficient|not enough|balance/i);
    expect(world.store.admin.journal(505)).toHaveLength(before);
  });
});

describe('List view', () => {
  test("a list's fields and its first records, money in major units", async () => {
    const created = await host.callTool({
      name: 'createListSchema',
      arguments: {
        name: 'Menu',
        bot_id: 11,
        fields: [
          { name: 'Drink', slug: 'drink', type: 'string' },
          { name: 'Price', slug: 'price', type: 'money', currency: 'USD' },
          { name: 'Seasonal', slug: 'seasonal', type: 'bool', is_required: false },
        ],
      },
    });
    const id = (created.structuredContent as { data: { id: string } }).data.id;
    listId = id;
    for (const [drink, price, seasonal] of [
      ['Flat white', 450, false],
      ['Pumpkin latte', 575, true],
      ['Espresso', 300, false],
    ] as const) {
      await host.callTool({ name: 'addListItem', arguments: { schema_id: id, data: { drink, price, seasonal } } });
    }
    const frame = await open('getListSchema', { schema_id: id });
    expect(await frame.$eval('#title', (e) => e.textContent)).toBe('Menu');
    expect(await cells(frame, '#fields tbody tr')).toEqual([
      ['Drink', 'drink', 'string', 'required'],
      ['Price', 'price', 'money (USD)', 'required'],
      ['Seasonal', 'seasonal', 'bool', '—'],
    ]);
    await frame.waitForSelector('#records');
    expect(await cells(frame, '#records tbody tr')).toEqual([
      ['Flat white', '4.50 USD', 'no'],
      ['Pumpkin latte', '5.75 USD', 'yes'],
      ['Espresso', '3.00 USD', 'no'],
    ]);
    expect(await frame.$eval('#records-count', (e) => e.textContent)).toBe('3 of 3 records');
    await screenshots(frame, 'list');
  });
});

describe('Bulk plan view', () => {
  test('a previewBulk plan with its total in major units; Confirm carries it out once, however often it is clicked', async () => {
    const action = { type: 'deposit', currency: 'USD', amount: 250, description: 'Guest gift' };
    const frame = await open('previewBulk', { selection: { bot_id: 11, tags: ['guest'] }, action, open_missing_accounts: true });
    const text = (sel: string) => frame.$eval(sel, (e: any) => String(e.textContent));
    expect(await text('#what')).toMatch(/^Top up \d+ contacts by 2\.50 USD each$/);
    const shown = Number((await text('#what')).split(' ')[2]);
    expect(shown).toBe(14); // the demo's 14 guests, their USD accounts opened as they are paid
    expect(await text('#total')).toBe(`Total: ${(shown * 2.5).toFixed(2)} USD`);
    const journal = () =>
      queryRows<{ n: number }>(world.store, "SELECT count(*) AS n FROM account_journal WHERE description = 'Guest gift'")[0]!.n;
    expect(Number(journal())).toBe(0);
    await frame.click('#confirm');
    await frame.waitForFunction(() => /^Done /.test(document.getElementById('outcome')?.textContent ?? ''));
    expect(await text('#outcome')).toBe(`Done ${shown}, failed 0, skipped 0, left 0.`);
    expect(Number(journal())).toBe(shown);
    // Carried out: the button says so and takes no second click (the server repeats no step anyway: test/mcp/apps.test.ts).
    expect(await frame.$eval('#confirm', (b: any) => [b.disabled, b.textContent])).toEqual([true, 'Carried out']);
    await frame.click('#confirm');
    expect(Number(journal())).toBe(shown);
    await screenshots(frame, 'bulk');
  });
});

test('every view reads at 360 px: nothing scrolls sideways, table rows stack', async () => {
  expect(listId).toBeDefined();
  for (const [tool, args] of [
    ['getContacts', { bot_id: 11, count: 5 }],
    ['getContactAccounts', { contact_id: 1001 }],
    ['getListSchema', { schema_id: listId }],
  ] as const) {
    const frame = await open(tool, args, { width: 360 });
    await frame.waitForSelector('table');
    const layout = await frame.evaluate(() => ({
      overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      heads: [...document.querySelectorAll('thead')].map((t: any) => getComputedStyle(t).display),
    }));
    expect({ tool, ...layout }).toEqual({ tool, overflow: 0, heads: layout.heads.map(() => 'none') });
  }
});
