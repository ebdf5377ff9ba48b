/**
 * `--bot` / $WORKSPACE_BOT_ID and `--project` over the built CLI as a process: a bad value is a
 * one-line start-up error (exit 2); a good one is the default bot that getWorkspace names and
 * that fills a required bot_id the caller left out.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Store } from '../../src/store/index.js';
import { loadFixture } from '../../src/store/seed.js';
import { CLI, cliEnv, runCliAsync } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { baseFixture } from '../helpers/world.js';
import { withinBudget } from '../helpers/budget.js';

/** Alice owns bot 10; bot 20 is Bob's (Alice was only invited to its project). */
function seeded(): string {
  const file = join(tempDir(), 'w.db');
  const store = Store.open(file);
  loadFixture(store, { ...baseFixture(), contacts: [{ id: 100, bot_id: 10, messenger: 'telegram', name: 'Anna Lee', telegram_id: '1' }] });
  store.close();
  return file;
}

describe('the default bot', () => {
  it('a --bot that is no bot of the owner, or no number, and a --project that is no uuid: one line, exit 2', async () => {
    const db = seeded();
    const env = cliEnv({ WORKSPACE_API_KEY: 'alice-key' });
    for (const [args, says] of [
      [['--db', db, '--bot', '20'], /--bot 20 is not a bot of owner 1: give one of its bots: 10 \(Shop bot\)/],
      [['--db', db, '--bot', 'Shop'], /--bot must be a whole number 1 or more, not Shop/],
      [['--db', db, '--project', 'Shop'], /--project must be a project uuid, not Shop/],
    ] as const) {
      const r = await runCliAsync([...args], env);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(says);
    }
    const fromEnv = await runCliAsync(['--db', db], { ...env, WORKSPACE_BOT_ID: '99' });
    expect(fromEnv.status).toBe(2);
    expect(fromEnv.stderr).toMatch(/WORKSPACE_BOT_ID 99 is not a bot/);
  });

  it('WORKSPACE_BOT_ID names the default bot: getWorkspace says so and a left-out bot_id is filled', async () => {
    const db = seeded();
    const client = withinBudget(new Client({ name: 'test', version: '1.0.0' }));
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, '--db', db],
        env: cliEnv({ WORKSPACE_API_KEY: 'alice-key', WORKSPACE_BOT_ID: '10' }),
        stderr: 'ignore',
      }),
    );
    try {
      const ws = (await client.callTool({ name: 'getWorkspace', arguments: {} })).structuredContent as any;
      expect(ws.default_bot_id).toBe(10);
      expect(ws.bots.map((b: { id: number }) => b.id)).toEqual([10]);
      const made = (await client.callTool({ name: 'createOrUpdateContact', arguments: { messenger: 'vk', vk_id: 7, name: 'Vera Kim' } }))
        .structuredContent as any;
      expect(made.data.bot_id).toBe(10);
      const found = (await client.callTool({ name: 'findContacts', arguments: { query: 'vera' } })).structuredContent as any;
      expect(found.data.map((c: { id: number }) => c.id)).toEqual([made.data.id]);
    } finally {
      await client.close();
    }
  });
});
