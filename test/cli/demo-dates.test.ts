/**
 * The demo is dated relative to its seeding (`"relative_dates": true` in fixtures/demo.json):
 * seeded through the built CLI, its newest contact joined within the last day, so "who joined in
 * the last 7 days" finds some, whenever the test runs; the spacing of its dates is the fixture's.
 * Loaded as written (the tests' own worlds), the fixture keeps its fixed dates.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { CLI, cliEnv } from '../helpers/cli.js';
import { demoFixture, seedDb, tempDir } from '../helpers/world.js';
import { connectStdio, TEST_ERA } from '../mcp/clients.js';
import { relativeDates } from '../../src/cli/fixture-dates.js';

const DAY = 86_400;

function createdAt(db: string): Array<{ id: number; created_at: string }> {
  const conn = new Database(db, { readonly: true });
  try {
    return conn.prepare('SELECT id, created_at FROM contacts ORDER BY id').all() as Array<{ id: number; created_at: string }>;
  } finally {
    conn.close();
  }
}

test('seeded by the CLI, the demo has contacts who joined in the last 7 days, its spacing kept', async () => {
  const db = join(tempDir(), 'demo.db');
  const r = spawnSync(process.execPath, [CLI, 'seed', join('fixtures', 'demo.json'), '--db', db], { encoding: 'utf8', env: cliEnv() });
  expect(r.status, r.stderr).toBe(0);
  const now = Math.floor(Date.now() / 1000);
  const c = await connectStdio(TEST_ERA, {
    command: process.execPath,
    args: [CLI, 'mcp', '--db', db],
    env: cliEnv({ WORKSPACE_API_KEY: 'demo-dana-key', WORKSPACE_DATA_DIR: tempDir() }),
    stderr: 'pipe',
  });
  let lastWeek: number;
  try {
    const res = await c.callTool({ name: 'getNumberOfContacts', arguments: { bot_id: 11, date_from: now - 7 * DAY } });
    expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
    lastWeek = (res.structuredContent as { count: number }).count;
  } finally {
    await c.close();
  }
  expect(lastWeek).toBeGreaterThan(0);
  // The fixture's own contacts, as written: the same gaps between them, moved by whole days.
  const contacts = demoFixture().contacts as Array<{ id: number; created_at: string }>;
  const written = new Map(contacts.map((x) => [x.id, Date.parse(x.created_at)]));
  const seeded = createdAt(db).map((x) => ({ id: x.id, ms: Date.parse(x.created_at) }));
  const shifts = new Set(seeded.map((x) => x.ms - written.get(x.id)!));
  expect(shifts.size).toBe(1);
  const [shift] = [...shifts];
  expect(shift! % (DAY * 1000)).toBe(0);
  const newest = Math.max(...seeded.map((x) => x.ms));
  expect(newest).toBeLessThanOrEqual(Date.now());
  expect(Date.now() - newest).toBeLessThan(DAY * 1000);
});

test("loaded as written (the suites' worlds), the demo keeps its fixed dates; a fixture without the marker is never moved", () => {
  const db = seedDb(demoFixture());
  expect(createdAt(db).find((x) => x.id === 1001)!.created_at).toMatch(/^2026-03-02T08:00:00/);
  const plain = { contacts: [{ id: 1, created_at: '2020-01-01T00:00:00Z' }] };
  expect(relativeDates(plain, Date.parse('2030-01-01T00:00:00Z'))).toBe(plain);
  const moved = relativeDates({ ...plain, relative_dates: true }, Date.parse('2020-01-03T12:00:00Z')) as typeof plain;
  expect(moved.contacts[0]!.created_at).toBe('2020-01-03T00:00:00Z');
  expect(plain.contacts[0]!.created_at).toBe('2020-01-01T00:00:00Z');
});
