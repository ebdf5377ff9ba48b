#!/usr/bin/env node
// A short MCP session a newcomer can watch: a real MCP client drives the built CLI over stdio
// on a fresh temp database (seeded with one bot and three contacts) and prints every step. It
// opens with what people ask a model for: "what is Anna's balance? top her up" in two tool calls.
// Usage: npm run build && npm run demo
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'workspace-mcp-demo-'));
const db = join(dir, 'demo.db');
const fixture = join(dir, 'fixture.json');
writeFileSync(
  fixture,
  JSON.stringify({
    owners: [{ id: 1, name: 'Demo owner', email: 'demo@example.com', plan: 'pro', api_key: 'demo-key' }],
    projects: [{ uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', owner_id: 1, name: 'Coffee shop' }],
    bots: [{ id: 10, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Coffee bot' }],
    contacts: [
      {
        id: 100,
        bot_id: 10,
        messenger: 'telegram',
        name: 'Anna Lee',
        telegram_id: '5001',
        telegram_username: 'annalee',
        phone: '+447700900123',
        tags: ['regular'],
      },
      { id: 101, bot_id: 10, messenger: 'telegram', name: 'Ben', telegram_id: '5002' },
      { id: 102, bot_id: 10, messenger: 'vk', name: 'Cid', vk_user_id: 7003 },
    ],
    accounts: [{ id: 500, contact_id: 100, currency: 'USD', amount: 1250 }],
  }),
);
execFileSync(process.execPath, [CLI, 'seed', fixture, '--db', db], { stdio: 'ignore' });

let n = 0;
const step = (title) => console.log(`\n${++n}. ${title}`);
const show = (value) => console.log('   ' + JSON.stringify(value, null, 2).replace(/\n/g, '\n   '));
const env = { ...process.env, WORKSPACE_API_KEY: 'demo-key', WORKSPACE_LOG_LEVEL: 'warn' };
delete env.WORKSPACE_DB;
delete env.WORKSPACE_BASE_URL;
delete env.WORKSPACE_DATA_DIR;

console.log(`workspace-mcp demo: node ${CLI} mcp --db ${db}`);
const client = new Client({ name: 'workspace-mcp-demo', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--db', db], env, stderr: 'ignore' }));

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args });
  console.log(`   → ${name}(${JSON.stringify(args)})${r.isError ? '  [error]' : ''}`);
  return r.isError ? JSON.parse(r.content[0].text) : r.structuredContent;
}

try {
  step('List the tools');
  const { tools } = await client.listTools();
  console.log(`   ${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`);

  step('"What is Anna\'s balance? Top her up by 10 USD": two tool calls');
  const found = await call('findContacts', { query: 'anna' });
  const anna = found.data[0];
  show({
    id: anna.id,
    name: anna.name,
    usernames: anna.usernames,
    phone: anna.phone,
    accounts: anna.accounts,
    index: found.meta.index.source,
  });
  const usd = anna.accounts.find((a) => a.currency === 'USD');
  console.log(`   Anna's balance: ${(usd.amount / 100).toFixed(2)} USD (account ${usd.id})`);
  const credited = await call('addFundsToContactAccount', {
    account_id: usd.id,
    amount: 1000,
    description: 'Top-up asked in chat',
    idempotency_key: 'demo-anna-1',
  });
  console.log(`   new balance: ${credited.data.amount_note}`);
  console.log('   (findContacts also takes a phone in any format, "+44 7700 900123", its last 7 digits, or "@annalee")');

  step('Where to start: getWorkspace gives the ids other tools need');
  const ws = await call('getWorkspace', {});
  show({ owner: ws.owner, projects: ws.projects, bots: ws.bots, default_bot_id: ws.default_bot_id });

  step('Create a list for orders');
  const list = await call('createListSchema', {
    name: 'Orders',
    bot_id: 10,
    fields: [
      { name: 'Order number', slug: 'order_number', type: 'string' },
      { name: 'Total', slug: 'total', type: 'money', currency: 'USD' },
    ],
  });
  show({ id: list.data.id, name: list.data.name, fields: Object.keys(list.data.fields) });
  const { resources } = await client.listResources();
  console.log(`   resources/list: ${resources.map((r) => r.uri).join(', ')}`);

  step('Open a USD account for Ben (contact 101)');
  const account = await call('addContactAccount', { contact_id: 101, currency: 'USD' });
  show(account.data);

  step('Top up 15.00 USD (1500 minor units), with an idempotency key');
  const topUp = { account_id: account.data.id, amount: 1500, description: 'Welcome bonus', idempotency_key: 'demo-welcome-1' };
  show((await call('addFundsToContactAccount', topUp)).data);
  console.log('   ...and again with the same key (a retry): replayed, no money moves');
  const replay = await call('addFundsToContactAccount', topUp);
  show({ amount_note: replay.data.amount_note, replayed: replay.replayed });

  step('Debit 4.50 USD (450)');
  show((await call('withdrawFundsFromContactAccount', { account_id: account.data.id, amount: 450, description: 'Latte' })).data);
  console.log('   ...and an impossible debit comes back as an error the model can read:');
  show(await call('withdrawFundsFromContactAccount', { account_id: account.data.id, amount: 100000, description: 'Too much' }));

  step("Export the bot's contacts");
  const exp = await call('exportContacts', { bot_id: 10, format: 'jsonl' });
  show(exp);
  console.log('   first line: ' + readFileSync(exp.file, 'utf8').split('\n')[0].slice(0, 120) + '...');
  console.log('\nDone.');
} finally {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
}
