/** The database's default place: the user's data folder, with empty variables read as unset. */
import { join, resolve } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { defaultDataDir, resolveDbFile } from '../../src/cli/paths.js';

const saved = { XDG_DATA_HOME: process.env.XDG_DATA_HOME, WORKSPACE_DB: process.env.WORKSPACE_DB };
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

it('an empty XDG_DATA_HOME or WORKSPACE_DB counts as unset (never the current folder)', () => {
  process.env.XDG_DATA_HOME = '';
  process.env.WORKSPACE_DB = '';
  expect(defaultDataDir()).not.toBe('workspace-mcp');
  expect(resolveDbFile(undefined)).toBe(join(defaultDataDir(), 'workspace.db'));
  process.env.WORKSPACE_DB = 'x.db';
  expect(resolveDbFile(undefined)).toBe(resolve('x.db'));
  expect(resolveDbFile('flag.db')).toBe(resolve('flag.db'));
});
