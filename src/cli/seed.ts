/**
 * `workspace-mcp seed FIXTURE.json` and `workspace-mcp demo`: a fixture loaded in one
 * transaction, or nothing written (a database this command made is then removed). A fixture
 * already loaded (each of its owners there, with its id and key) is said to be so, and nothing
 * is written: seeding twice is not an error.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StoreApi } from '../store/store-api.js';
import { parse, UsageError } from './args.js';
import { claudeMcpAdd, clientEntry, counted, mcpServersJson } from './banner.js';
import { relativeDates } from './fixture-dates.js';
import { COMMANDS } from './help.js';
import { openStore } from './open.js';
import { defaultDataDir, locateDb, type DbLocation } from './paths.js';

/** The demo fixture, shipped in the package beside dist/ (fixtures/demo.json). */
export const DEMO_FIXTURE = fileURLToPath(new URL('../../fixtures/demo.json', import.meta.url));

/** The owner ids of a fixture that are all in the database already, with the same keys; undefined when any is not. */
function loadedOwners(store: StoreApi, fixture: unknown): number[] | undefined {
  const owners = (fixture as { owners?: unknown } | null)?.owners;
  if (!Array.isArray(owners) || owners.length === 0) return undefined;
  const ids: number[] = [];
  for (const o of owners as Array<{ id?: unknown; api_key?: unknown }>) {
    if (typeof o?.id !== 'number') return undefined;
    if (!store.owners.get(o.id)) return undefined;
    if (typeof o.api_key === 'string' && store.owners.byKey(o.api_key)?.id !== o.id) return undefined;
    ids.push(o.id);
  }
  return ids;
}

export type SeedOutcome = { seeded: Record<string, number> } | { already: number[] };

/** Load the fixture in `file` into the database at `loc`. Throws UsageError / StartError. */
export async function seedFile(file: string, loc: DbLocation): Promise<SeedOutcome> {
  // Loaded by the command that needs it: the MCP server's cold start never loads it.
  const { FixtureClash, FixtureError, loadFixture } = await import('../store/seed.js');
  let fixture: unknown;
  try {
    // The demo's dates move to the days before this seeding (fixture-dates.ts).
    fixture = relativeDates(JSON.parse(readFileSync(file, 'utf8')), Date.now());
  } catch (e) {
    throw new UsageError(`cannot read fixture ${file}: ${(e as Error).message}`);
  }
  // A PostgreSQL database is never removed: it was there before the seed.
  const existed = loc.url !== undefined || existsSync(loc.file);
  const store = await openStore(loc, { create: true });
  let failed = false;
  try {
    const already = loadedOwners(store, fixture);
    if (already) return { already };
    return { seeded: loadFixture(store, fixture) };
  } catch (e) {
    failed = true;
    // A database used before (seeded, or served): what it holds, and where a fixture can go instead.
    // What it clashed with: the database's own entries when it held some, else an earlier entry of the fixture.
    if (e instanceof FixtureClash && store.owners.count() > 0)
      throw new UsageError(
        `fixture ${file}: ${e.where} is in the database already (${loc.file} holds ${counted(store.owners.count(), 'owner')}: seeded before, or used by a server): seed into ${loc.url !== undefined ? 'an empty PostgreSQL database' : 'a new file (--db NEW.db)'}, or give the fixture's entries ids the database does not hold; nothing was written`,
      );
    if (e instanceof FixtureError) throw new UsageError(`fixture ${file}: ${e.message}; nothing was written`);
    throw e;
  } finally {
    store.close();
    // "Nothing is written": a database this seed made is not left behind, empty, by a bad fixture.
    if (failed && !existed) for (const f of [loc.file, `${loc.file}-wal`, `${loc.file}-shm`]) rmSync(f, { force: true });
  }
}

/** What a fixture loaded: `3 owners, 1 member, ...` (the fixture's keys are its plural nouns). */
function loaded(seeded: Record<string, number>): string {
  return Object.entries(seeded)
    .map(([k, n]) => counted(n, k.replace(/s$/, ''), k))
    .join(', ');
}

function summary(outcome: SeedOutcome, file: string, db: string): string {
  if ('already' in outcome) {
    const owners =
      outcome.already.length === 1 ? `its owner ${outcome.already[0]} is there` : `its owners ${outcome.already.join(', ')} are there`;
    return `${file} is already loaded in ${db} (${owners}): nothing was written`;
  }
  return `seeded ${db}: ${loaded(outcome.seeded) || 'nothing'}`;
}

export async function runSeed(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, COMMANDS.seed.flags, 1);
  const file = positionals[0];
  if (!file) throw new UsageError('seed needs a fixture file: workspace-mcp seed FIXTURE.json [--db FILE]');
  if (values.db === '') throw new UsageError('--db needs a file path');
  const loc = locateDb(values.db as string | undefined);
  process.stderr.write(`${summary(await seedFile(file, loc), file, loc.file)}\n`);
}

/**
 * `workspace-mcp demo`: the demo fixture in a database of its own (demo.db in the data folder,
 * or `--db`; WORKSPACE_DB and DATABASE_URL are not read, so no database of yours is touched
 * unless named), and the configs that start the MCP server on it, on stdout.
 */
function demoOwner(): string {
  const o = (JSON.parse(readFileSync(DEMO_FIXTURE, 'utf8')) as { owners: Array<{ id: number; name: string }> }).owners[0]!;
  return `${o.name} (owner ${o.id})`;
}

export async function runDemo(args: string[]): Promise<void> {
  const { values } = parse(args, COMMANDS.demo.flags);
  if (values.db === '') throw new UsageError('--db needs a file path or a postgres:// URL');
  const loc: DbLocation =
    values.db !== undefined ? locateDb(values.db as string) : { file: join(defaultDataDir(), 'demo.db'), source: 'default' };
  const outcome = await seedFile(DEMO_FIXTURE, loc);
  // A PostgreSQL database: its URL holds a password and the secret is one, so both are placeholders.
  const entry =
    loc.url !== undefined
      ? clientEntry([], { DATABASE_URL: '<your postgres:// URL>', WORKSPACE_SECRET: '<the same secret on every instance>' })
      : clientEntry(['--db', loc.file]);
  const said =
    'already' in outcome
      ? `The demo data is already in ${loc.file}: nothing changed.`
      : `The demo data is in ${loc.file} (${loaded(outcome.seeded)}).`;
  const lines = [
    said,
    `With no key, the MCP server acts as the database's first owner, ${demoOwner()}.`,
    '',
    'Claude Desktop: add this to claude_desktop_config.json (Settings > Developer > Edit Config;',
    '  macOS ~/Library/Application Support/Claude/, Windows %APPDATA%\\Claude\\), merged into any "mcpServers" there, then restart Claude Desktop:',
    '',
    mcpServersJson(entry, 2),
    '',
    'Claude Code: run',
    '',
    `  ${claudeMcpAdd(entry)}`,
    '',
    'Cursor: the same JSON as for Claude Desktop, in .cursor/mcp.json of your project (or ~/.cursor/mcp.json for every project).',
  ];
  if (loc.url !== undefined)
    lines.push('', 'Put your database URL and WORKSPACE_SECRET in the placeholders: the URL holds a password, so it is not printed.');
  process.stdout.write(lines.join('\n') + '\n'); // stdout-ok: demo prints the configs to paste
}
