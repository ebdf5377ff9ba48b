/**
 * The few lines a server prints on stderr once it is ready: where its data is, who it acts as,
 * the default owner's key on the start that made it, and how to connect. A server started by
 * hand over stdio would otherwise look hung. Never on stdout: over stdio that is the protocol.
 */
import { realpathSync } from 'node:fs';
import type { OwnerSummary } from './open.js';

export interface BannerInfo {
  /** What is ready, e.g. "MCP server ready over stdio". */
  ready: string;
  database?: { file: string; created: boolean };
  remote?: string;
  owner?: OwnerSummary & { via?: string };
  /** The default owner's key, on the start that made it only. */
  newKey?: string;
  /** The money caps, and whether confirmation is off. */
  money?: string;
  /** The bearer token made at this start (--http beyond loopback), and what to do with it. */
  token?: string;
  /** One line: how a client connects (`serve`: what to try, labelled so). */
  connect: string;
  connectLabel?: string;
}

function ownerLine(o: NonNullable<BannerInfo['owner']>): string {
  const parts = [`${o.id} ${o.name}${o.via ? ` (${o.via})` : ''}`];
  if (o.project) parts.push(`project ${o.project}`);
  if (o.bot !== undefined) parts.push(`bot ${o.bot}`);
  return parts.join(' · ');
}

export function printBanner(info: BannerInfo): void {
  const rows: Array<[string, string]> = [];
  if (info.database) rows.push(['database', `${info.database.file}${info.database.created ? ' (new)' : ''}`]);
  if (info.remote) rows.push(['remote', info.remote]);
  if (info.owner) rows.push(['owner', ownerLine(info.owner)]);
  if (info.newKey) rows.push(['API key', `${info.newKey} (the new default owner's; shown this once)`]);
  if (info.money) rows.push(['money', info.money]);
  if (info.token) rows.push(['token', info.token]);
  rows.push([info.connectLabel ?? 'connect', info.connect]);
  const lines = [`workspace-mcp: ${info.ready}`, ...rows.map(([k, v]) => `  ${k.padEnd(9)} ${v}`)];
  process.stderr.write(lines.join('\n') + '\n');
}

/**
 * The command line that starts this server again, as an MCP client's config wants it (JSON).
 * A key in use is named, never shown: the config gets a placeholder for it (as for `more`'s).
 */
export function stdioConfig(args: string[], withKey: boolean, more: Record<string, string> = {}): string {
  let entry = process.argv[1] ?? 'workspace-mcp';
  try {
    entry = realpathSync(entry);
  } catch {
    // Keep it as given.
  }
  const vars = { ...(withKey ? { WORKSPACE_API_KEY: '<your key>' } : {}), ...more };
  const env = Object.keys(vars).length > 0 ? { env: vars } : {};
  return `MCP client config ${JSON.stringify({ command: process.execPath, args: [entry, ...args], ...env })}`;
}
