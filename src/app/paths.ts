/** Where the database lives when no `--db` or `$WORKSPACE_DB` says: the user's data folder. */
import { homedir, platform } from 'node:os';
import { join } from 'node:path';

export function defaultDataDir(): string {
  const home = homedir();
  if (platform() === 'win32') return join(process.env.APPDATA || join(home, 'AppData', 'Roaming'), 'workspace-mcp');
  if (platform() === 'darwin') return join(home, 'Library', 'Application Support', 'workspace-mcp');
  return join(process.env.XDG_DATA_HOME || join(home, '.local', 'share'), 'workspace-mcp');
}

export function resolveDbFile(flag: string | undefined): string {
  return flag ?? (process.env.WORKSPACE_DB || join(defaultDataDir(), 'workspace.db'));
}
