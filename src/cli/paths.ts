/**
 * Where the files live: the database given by `--db` or `$WORKSPACE_DB` (`~` is the home
 * folder: an MCP client's config has no shell to expand it), else one in the user's data folder.
 * A PostgreSQL URL (`--db postgres://…`, or `$DATABASE_URL` when neither is given) names a
 * shared database instead of a file.
 */
import { homedir, platform } from 'node:os';
import { join, resolve } from 'node:path';
import { isPostgresUrl } from '../store/pg/url.js';

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

/**
 * The database to use and who named it: a file (absolute; a named file's folder must exist),
 * or a PostgreSQL `url`, whose `file` is then the URL without its password (for messages).
 */
export interface DbLocation {
  file: string;
  source: '--db' | 'WORKSPACE_DB' | 'DATABASE_URL' | 'default';
  url?: string;
}

/** A PostgreSQL URL fit to print: its password left out. */
function redactUrl(url: string): string {
  return url.replace(/^(\w+:\/\/[^:@/]*):[^@/]*@/, '$1@');
}

export function locateDb(flag: string | undefined): DbLocation {
  const env = process.env.WORKSPACE_DB;
  const url = process.env.DATABASE_URL;
  // DATABASE_URL is often set for other programs: only a PostgreSQL URL in it is ours to take.
  const [value, source] =
    flag !== undefined
      ? ([flag, '--db'] as const)
      : env
        ? ([env, 'WORKSPACE_DB'] as const)
        : url && isPostgresUrl(url)
          ? ([url, 'DATABASE_URL'] as const)
          : [];
  if (value !== undefined && isPostgresUrl(value)) return { file: redactUrl(value), source: source!, url: value };
  if (flag !== undefined) return { file: resolve(expandHome(flag)), source: '--db' };
  if (env) return { file: resolve(expandHome(env)), source: 'WORKSPACE_DB' };
  return { file: join(defaultDataDir(), 'workspace.db'), source: 'default' };
}

export function resolveDbFile(flag: string | undefined): string {
  return locateDb(flag).file;
}
