/**
 * A stdio server started with no flag that changes its tools answers the first tools/list from
 * the build's recorded answer, before its tools are loaded (src/cli/tool-list.ts). That answer
 * must be, byte for byte, what the wired server lists: for every flag (the tool flags, --no-ui,
 * the money caps, the result budget, --remote), both protocol eras (2025, with and without
 * tasks' `execution`, and 2026-07-28) and a client with and without MCP Apps. Each server here
 * is asked tools/list at once with its opening message (before anything is loaded), then, once
 * prompts/list has waited for the tools, again; both answers are compared whole. --scopes is
 * refused over stdio (it applies to --http, which never answers early).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cliEnv, runCli, spawnRpc, spawnServe, type Served } from '../helpers/cli.js';
import { baseFixture, seedDb, tempDir } from '../helpers/world.js';

const APPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
const EARLY = "tools/list answered from the build's list";

type Era = '2025-06-18' | '2025-11-25' | '2026-07-28';
const ERAS: Era[] = ['2025-06-18', '2025-11-25', '2026-07-28'];

/** The raw answer line to request `id`, with its id written as 0 (the rest as the server wrote it). */
function rawAnswer(lines: string[], id: number): string {
  const line = lines.find((l) => (JSON.parse(l) as { id?: number }).id === id);
  if (line === undefined) throw new Error(`no answer to ${id}`);
  const marked = `"id":${id}`;
  expect(line.split(marked).length).toBe(2);
  return line.replace(marked, '"id":0');
}

/**
 * tools/list of a stdio server started with `flags`, asked with the opening message (`early`)
 * and again once prompts/list was answered (`wired`); `answeredEarly`: how often the server
 * said it answered from the build's list.
 */
async function bothLists(
  flags: string[],
  era: Era,
  apps: boolean,
  env: Record<string, string> = {},
): Promise<{ early: string; wired: string; answeredEarly: number; count: number }> {
  const rpc = spawnRpc(['mcp', ...flags], cliEnv({ WORKSPACE_LOG_LEVEL: 'debug', WORKSPACE_DATA_DIR: tempDir(), ...env }));
  const capabilities = apps ? APPS : {};
  const meta =
    era === '2026-07-28'
      ? {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': era,
            'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': capabilities,
          },
        }
      : undefined;
  try {
    if (meta) rpc.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: meta });
    else {
      rpc.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: era, capabilities, clientInfo: { name: 't', version: '1' } },
      });
      rpc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    }
    rpc.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', ...(meta ? { params: meta } : {}) });
    const first = await rpc.answer(2);
    rpc.send({ jsonrpc: '2.0', id: 3, method: 'prompts/list', ...(meta ? { params: meta } : {}) });
    await rpc.answer(3);
    rpc.send({ jsonrpc: '2.0', id: 4, method: 'tools/list', ...(meta ? { params: meta } : {}) });
    await rpc.answer(4);
    const lines = rpc.lines();
    return {
      early: rawAnswer(lines, 2),
      wired: rawAnswer(lines, 4),
      answeredEarly: rpc.stderr().split(EARLY).length - 1,
      count: (first.result.tools as unknown[]).length,
    };
  } finally {
    rpc.proc.kill();
  }
}

let served: Served;
let policy: string;

beforeAll(async () => {
  served = await spawnServe(['--db', seedDb(baseFixture())]);
  policy = join(tempDir(), 'policy.json');
  writeFileSync(policy, JSON.stringify({ max_amount: { USD: '20.00' }, max_daily: '90' }));
});

afterAll(() => {
  served?.proc.kill();
});

/** Each start: its flags, its variables, and whether the build's list may answer it. */
const STARTS: Array<{ name: string; flags: () => string[]; env?: () => Record<string, string>; early: boolean }> = [
  { name: 'no flags, a new database', flags: () => ['--db', join(tempDir(), 'w.db')], early: true },
  {
    name: 'its key, a seeded database, a default bot and a result budget',
    flags: () => ['--db', seedDb(baseFixture()), '--bot', '10', '--max-result-chars', '50000', '--rate-limit', '0'],
    env: () => ({ WORKSPACE_API_KEY: 'alice-key' }),
    early: true,
  },
  {
    name: 'the money caps',
    flags: () => ['--db', join(tempDir(), 'w.db'), '--max-amount', '12.50', '--max-daily', '100', '--no-confirm', '--money-policy', policy],
    early: true,
  },
  {
    name: '--remote',
    flags: () => ['--remote', served.baseUrl],
    env: () => ({ WORKSPACE_API_KEY: 'alice-key' }),
    early: true,
  },
  { name: '--read-only', flags: () => ['--db', join(tempDir(), 'w.db'), '--read-only'], early: false },
  {
    name: '--tools',
    flags: () => ['--db', join(tempDir(), 'w.db'), '--tools', 'getMe,getContacts,withdrawFundsFromContactAccount,previewBulk,runBulk'],
    early: false,
  },
  { name: '--exclude-tools', flags: () => ['--db', join(tempDir(), 'w.db'), '--exclude-tools', 'getMe,findContacts'], early: false },
  { name: '--no-ui', flags: () => ['--db', join(tempDir(), 'w.db'), '--no-ui'], early: false },
  {
    name: '--remote --read-only',
    flags: () => ['--remote', served.baseUrl, '--read-only'],
    env: () => ({ WORKSPACE_API_KEY: 'alice-key' }),
    early: false,
  },
];

describe.each(STARTS)('the first tools/list is what the wired server lists: $name', (start) => {
  test.each(ERAS.flatMap((era) => [false, true].map((apps) => ({ era, apps }))))('$era, MCP Apps $apps', async ({ era, apps }) => {
    const r = await bothLists(start.flags(), era, apps, start.env?.());
    expect(r.early).toBe(r.wired);
    expect(r.count).toBeGreaterThan(0);
    // The build's list answered the first tools/list exactly where no flag changes the list.
    expect(r.answeredEarly).toBe(start.early ? 1 : 0);
  });
});

test('the lists differ where they should: MCP Apps add the views-only tools; --no-ui and --read-only take tools away', async () => {
  const db = () => ['--db', join(tempDir(), 'w.db')];
  const plain = await bothLists(db(), '2025-11-25', false);
  const withApps = await bothLists(db(), '2025-11-25', true);
  const noUi = await bothLists([...db(), '--no-ui'], '2025-11-25', true);
  const readOnly = await bothLists([...db(), '--read-only'], '2025-11-25', false);
  expect(withApps.count).toBeGreaterThan(plain.count);
  expect(noUi.count).toBeLessThan(withApps.count);
  expect(readOnly.count).toBeLessThan(plain.count);
  // Tasks are offered to a 2025-11-25 client: the early list names them as the wired one does.
  expect(plain.early).toContain('"execution":{"taskSupport":"optional"}');
});

test('--scopes is refused over stdio: no scope changes what a stdio server lists', () => {
  const r = runCli(['mcp', '--db', join(tempDir(), 'w.db'), '--scopes', 'workspace:read']);
  expect(r.status).toBe(2);
  expect(r.stderr).toMatch(/--scopes needs --http/);
});
