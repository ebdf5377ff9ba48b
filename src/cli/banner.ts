/**
 * The few lines a server prints on stderr once it is ready: where its data is, who it acts as,
 * the default owner's key on the start that made it, and how to connect. A server started by
 * hand over stdio would otherwise look hung. Never on stdout: over stdio that is the protocol.
 */
import { realpathSync } from 'node:fs';
import type { OwnerSummary } from './open.js';
import type { DbLocation } from './paths.js';

export interface BannerInfo {
  /** What is ready, e.g. "MCP server ready over stdio". */
  ready: string;
  database?: { file: string; created: boolean };
  remote?: string;
  /** `defaultBot`: the MCP server's (null: none), as getWorkspace answers it. */
  owner?: OwnerSummary & { via?: string; defaultBot?: number | null };
  /** The default owner's key, on the start that made it only, and how to get a new one. */
  newKey?: { key: string; again: string };
  /** Where the database came from, when this start made it empty: said beside it, as a mistyped --db. */
  createdEmpty?: string;
  /** The money caps, and whether confirmation is off. */
  money?: string;
  /** The bearer token made at this start (--http beyond loopback), and what to do with it. */
  token?: string;
  /** A whole MCP client config (JSON), for the files that take one. */
  config?: string;
  /** One line: how a client connects (`serve`: what to try, labelled so). */
  connect: string;
  connectLabel?: string;
}

function ownerLine(o: NonNullable<BannerInfo['owner']>): string {
  const parts = [`${o.id} ${o.name}${o.via ? ` (${o.via})` : ''}`];
  if (o.project) parts.push(`project ${o.project}`);
  // The MCP server's default bot, by getWorkspace's rule (the configured one, else the only
  // bot); serve has none, and lists the bots.
  if (o.defaultBot !== undefined)
    parts.push(
      o.defaultBot !== null
        ? `default bot ${o.defaultBot}`
        : `no default bot (${o.bots?.length ? `bots ${o.bots.join(', ')}` : 'no bot'}: --bot picks one)`,
    );
  else if (o.bots?.length) parts.push(`${o.bots.length === 1 ? 'bot' : 'bots'} ${o.bots.join(', ')}`);
  return parts.join(' · ');
}

export function printBanner(info: BannerInfo): void {
  const rows: Array<[string, string]> = [];
  if (info.database)
    rows.push([
      'database',
      `${info.database.file}${info.database.created ? ` (new${info.createdEmpty ? `, empty: ${info.createdEmpty}` : ''})` : ''}`,
    ]);
  if (info.remote) rows.push(['remote', info.remote]);
  if (info.owner) rows.push(['owner', ownerLine(info.owner)]);
  if (info.newKey)
    rows.push(['API key', `${info.newKey.key} (the new default owner's; shown this once) · to make a new one later: ${info.newKey.again}`]);
  if (info.money) rows.push(['money', info.money]);
  if (info.token) rows.push(['token', info.token]);
  if (info.config) rows.push(['config', info.config]);
  rows.push([info.connectLabel ?? 'connect', info.connect]);
  const lines = [`workspace-mcp: ${info.ready}`, ...rows.map(([k, v]) => `  ${k.padEnd(9)} ${v}`)];
  process.stderr.write(lines.join('\n') + '\n');
}

/** The command that starts this CLI: `npx -y workspace-mcp` when npx ran it from its cache, else node and the script, both absolute. */
function launcher(): { command: string; args: string[] } {
  let entry = process.argv[1] ?? 'workspace-mcp';
  try {
    entry = realpathSync(entry);
  } catch {
    // Keep it as given.
  }
  // npx's cache may be cleared at any time: the config names the package instead.
  if (/[\\/]_npx[\\/]/.test(entry)) return { command: 'npx', args: ['-y', 'workspace-mcp'] };
  return { command: process.execPath, args: [entry] };
}

/** How an MCP client starts this server with `args` (and `env`): the entry of its config. */
export interface ClientEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

export function clientEntry(args: string[], env: Record<string, string> = {}): ClientEntry {
  const l = launcher();
  return { command: l.command, args: [...l.args, ...args], ...(Object.keys(env).length > 0 ? { env } : {}) };
}

/** The whole `mcpServers` block (Claude Desktop, Cursor and others take the same). */
export function mcpServersJson(entry: ClientEntry, indent?: number): string {
  return JSON.stringify({ mcpServers: { workspace: entry } }, null, indent);
}

/** A word fit for a POSIX shell (Windows: double quotes). */
function shellWord(w: string): string {
  if (/^[\w@%+=:,./-]+$/.test(w)) return w;
  if (process.platform === 'win32') return `"${w.replace(/"/g, '\\"')}"`;
  return `'${w.replace(/'/g, `'\\''`)}'`;
}

/** Claude Code's command that adds the server. */
export function claudeMcpAdd(entry: ClientEntry): string {
  const env = Object.entries(entry.env ?? {}).map(([k, v]) => `--env ${shellWord(`${k}=${v}`)} `);
  return `claude mcp add --transport stdio ${env.join('')}workspace -- ${[entry.command, ...entry.args].map(shellWord).join(' ')}`;
}

/**
 * The command line that starts this server again, as an MCP client's config wants it. A key in
 * use is named, never shown: the config gets a placeholder for it (as for `more`'s).
 */
export function stdioEntry(args: string[], withKey: boolean, more: Record<string, string> = {}): ClientEntry {
  return clientEntry(args, { ...(withKey ? { WORKSPACE_API_KEY: '<your key>' } : {}), ...more });
}

/** The banner's new key, with the command that makes another (a client hides stderr: the key may go unseen). */
export function newKeyInfo(key: string | undefined, ownerId: number | undefined, db: string): BannerInfo['newKey'] {
  if (key === undefined) return undefined;
  return { key, again: `workspace-mcp admin regenerate-key --owner ${ownerId ?? 1} --db ${shellWord(db)}` };
}

/** What to check when a start made its database empty: the setting that named it. */
export function createdEmptyHint(source: DbLocation['source']): string {
  return source === 'default'
    ? 'no --db was given; to use an existing database, give --db'
    : `if you meant an existing database, check ${source}`;
}

/** The warning tool results carry when the start made the database empty (a mistyped --db looks just like a first run). */
export function createdEmptyWarning(file: string, source: DbLocation['source']): string {
  return `The database ${file} was created empty when this server started (a default owner, project and bot only): ${createdEmptyHint(source)}.`;
}

/** `1 owner`, `3 owners`: a count with its noun in the right number. */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
