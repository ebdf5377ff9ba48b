/**
 * Where the files live: the database given by `--db` or `$WORKSPACE_DB` (`~` is the home
 * folder: an MCP client's config has no shell to expand it), else one in the user's data folder.
 */
import { homedir, platform } from 'node:os';
import { join, resolve } from 'node:path';

export function defaultDataDir(): string {
  const home = homedir();
  if (platform() === 'win32') return join(process.env.APPDATA || join(home, 'AppData', 'Roaming'), 'workspace-mcp');
  if (platform() === 'darwin') return join(home, 'Library', 'Application Support', 'workspace-mcp');
  return join(process.env.XDG_DATA_HOME || join(home, '.local', 'share'), 'workspace-mcp');
}

/** `~` and `~/…` (`~\…` too) as the home folder; other paths as they are. */
export function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/') || path.startsWith('~\\')) return join(homedir(), path.slice(2));
  return path;
}

/** The database file to use (absolute) and who named it: a named file's folder must exist. */
export interface DbLocation {
  file: string;
  source: '--db' | 'WORKSPACE_DB' | 'default';
}

export function locateDb(flag: string | undefined): DbLocation {
  if (flag !== undefined) return { file: resolve(expandHome(flag)), source: '--db' };
  const env = process.env.WORKSPACE_DB;
  if (env) return { file: resolve(expandHome(env)), source: 'WORKSPACE_DB' };
  return { file: join(defaultDataDir(), 'workspace.db'), source: 'default' };
}

export function resolveDbFile(flag: string | undefined): string {
  return locateDb(flag).file;
}
