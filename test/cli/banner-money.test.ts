/**
 * The stdio banner's client config keeps the money caps (issue 49): whoever pastes it into Claude
 * Desktop starts the server with every money flag they gave (`--max-amount`, `--max-daily`,
 * `--money-policy`, `--no-confirm`), or with the variables the caps came from; a policy file named
 * relatively is named absolutely, as a client started from elsewhere must find it. The config
 * started again says the same money line.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, cliEnv, collect } from '../helpers/cli.js';
import { baseFixture, seedDb, tempDir } from '../helpers/world.js';

interface Entry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** Start `command args` over stdio, read the banner's config and money rows, end it. */
async function started(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<{ entry: Entry; money: string }> {
  const proc = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  const err = collect(proc.stderr);
  try {
    await err.wait(/\n {2}connect .*\n/);
    const row = (label: string) => new RegExp(`^ {2}${label} +(.*)$`, 'm').exec(err.text())?.[1];
    const config = JSON.parse(row('config')!) as { mcpServers: { workspace: Entry } };
    return { entry: config.mcpServers.workspace, money: row('money')! };
  } finally {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.stdin.end();
    await exited;
  }
}

describe("the stdio banner's config keeps the money caps", () => {
  it('given as flags: the config carries each, the policy file absolute; started again it has the same caps', async () => {
    const dir = tempDir();
    const db = seedDb(baseFixture(), 'w.db', dir);
    writeFileSync(join(dir, 'policy.json'), JSON.stringify({ max_amount: { USD: '20.00' }, max_daily: '90' }));
    const flags = ['--money-policy', 'policy.json', '--max-amount', '12.50', '--no-confirm'];
    const first = await started(process.execPath, [CLI, '--db', db, ...flags], cliEnv(), dir);
    expect(first.money).toBe(
      'caps 12.50 a call, 90 per account per 24 h; confirmation is OFF (--no-confirm): calls over a cap move money without asking anyone',
    );
    const args = first.entry.args;
    expect(args.slice(args.indexOf('--db'))).toEqual([
      '--db',
      db,
      '--money-policy',
      join(dir, 'policy.json'),
      '--max-amount',
      '12.50',
      '--no-confirm',
    ]);
    expect(first.entry.env).toBeUndefined();
    // Pasted and started from elsewhere (another folder), the server keeps the caps.
    const again = await started(first.entry.command, args, cliEnv(), tempDir());
    expect(again.money).toBe(first.money);
    expect(again.entry).toEqual(first.entry);

    const daily = await started(process.execPath, [CLI, '--db', db, '--max-daily', '300'], cliEnv());
    expect(daily.entry.args.slice(-2)).toEqual(['--max-daily', '300']);
  });

  it("given as variables: the config's env carries them (a flag given over one: the flag alone)", async () => {
    const dir = tempDir();
    const db = seedDb(baseFixture(), 'w.db', dir);
    writeFileSync(join(dir, 'policy.json'), JSON.stringify({ max_amount: '40' }));
    const vars = { WORKSPACE_MONEY_POLICY: 'policy.json', WORKSPACE_MAX_DAILY: '75.00', WORKSPACE_MAX_AMOUNT: '30' };
    const first = await started(process.execPath, [CLI, '--db', db, '--max-amount', '5'], cliEnv(vars), dir);
    expect(first.money).toBe('caps 5 a call, 75.00 per account per 24 h');
    expect(first.entry.args.slice(-4)).toEqual(['--db', db, '--max-amount', '5']);
    expect(first.entry.env).toEqual({ WORKSPACE_MONEY_POLICY: join(dir, 'policy.json'), WORKSPACE_MAX_DAILY: '75.00' });
    // The config as a client runs it: its env only, from another folder.
    const again = await started(first.entry.command, first.entry.args, cliEnv(first.entry.env), tempDir());
    expect(again.money).toBe(first.money);
  });
});
