/**
 * The service threads of `serve` on PostgreSQL (service/pool.ts) when one cannot answer: what
 * it held is answered honestly (a change that may have been made says `outcome_unknown`; one
 * never begun, or a read, is a plain 503), and a thread that dies logs why, with its stack.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { unanswered } from '../../src/service/pool.js';
import { cliEnv } from '../helpers/cli.js';
import { ROOT, tempDir } from '../helpers/world.js';

describe('what a request its thread could not answer gets', () => {
  it('a change that may have begun: outcome_unknown, naming the read that tells; the money kind names the check for money', () => {
    const made = unanswered('createListSchema', true);
    expect(made.status).toBe(503);
    expect(made.headers['Retry-After']).toBe('1');
    expect(made.body).toMatchObject({ code: 'outcome_unknown' });
    expect((made.body as { message: string }).message).toMatch(/may or may not have been made\. Read it back with getListSchemas/);
    expect((unanswered('addFundsToContactAccount', true).body as { message: string }).message).toMatch(/money may or may not have moved/);
  });

  it('a read, or a change never begun: a plain 503, not carried out', () => {
    for (const res of [unanswered('getListSchemas', true), unanswered('createListSchema', false), unanswered('noSuchMethod', true)]) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ message: 'Service Unavailable' });
    }
  });
});

describe('a service thread that dies', () => {
  it('logs the real error with its stack, and its request is answered 503 as not carried out', () => {
    // The built pool (its thread is the built pool-worker.js), on a database that refuses the connection.
    const pool = pathToFileURL(join(ROOT, 'dist', 'service', 'pool.js')).href;
    const script = `
      const { ServicePool } = await import(${JSON.stringify(pool)});
      const lines = [];
      const logger = { error: (o, msg) => lines.push({ msg, ...o }), warn: (o, msg) => lines.push({ msg, ...o }) };
      const secrets = { encryptionKey: Buffer.alloc(32, 1), signingKey: Buffer.alloc(32, 2) };
      const pool = new ServicePool({ url: 'postgres://u:pool-test-password@127.0.0.1:1/none', rateLimit: 0, secrets }, 1, logger);
      await pool.ready();
      const res = await pool.call({ method: 'createListSchema', verb: 'POST', input: { name: 'L' }, bearer: 'k', wantsJson: true, baseUrl: 'http://h/api/v1' });
      await pool.close();
      process.stdout.write(JSON.stringify({ res, lines: lines.map(({ err, ...l }) => l) }));`;
    // A script file run as `serve` is (its thread inherits no -e).
    const file = join(tempDir(), 'pool.mjs');
    writeFileSync(file, script);
    const r = spawnSync(process.execPath, [file], { encoding: 'utf8', env: cliEnv(), timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { res: { status: number; body: unknown }; lines: Array<Record<string, unknown>> };
    // Its thread never said it was ready: the change was never begun.
    expect(out.res).toMatchObject({ status: 503, body: { message: 'Service Unavailable' } });
    expect(out.lines).toContainEqual({ msg: 'a service thread ended with requests in hand', exit_code: 1, methods: ['createListSchema'] });
    const failed = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; err?: { message: string; stack: string } })
      .filter((l) => l.msg === 'a service thread failed');
    expect(failed.length, r.stderr).toBeGreaterThan(0);
    expect(failed[0]!.err!.message).toMatch(/ECONNREFUSED/);
    expect(failed[0]!.err!.stack).toMatch(/pool-worker\.js/);
    expect(r.stderr).not.toContain('pool-test-password');
  });
});
