/** `workspace-mcp admin`: the dashboard operations that are not API methods. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findMethod } from '../api/catalog.js';
import { isSuccess, type AuditEntry } from '../api/backend.js';
import { isMoney } from '../api/define.js';
import { openStore } from './open.js';
import { locateDb } from './paths.js';
import { normalizeTime } from '../store/time.js';
import { closest, intFlag, parse, UsageError } from './args.js';
import { ADMIN_COMMANDS as COMMANDS, COMMANDS as HELP } from './help.js';
import { dataDirFor, MCP_STATE_FILE } from './mcp-backend.js';
import type { StoreApi } from '../store/store-api.js';
import type { PgStore } from '../store/pg/index.js';
import type { GrantRow } from '../oauth/store.js';
import type { TrailQuery } from '../store/audit.js';
import type { OAuthStoreSync } from '../state/async.js';

/** What the grant commands use of OAuth sign-in's store: its synchronous form (admin is a one-shot process, no one else waits on it). */
type Grants = Pick<OAuthStoreSync, 'grants' | 'grant' | 'revokeGrant'>;
import { McpStateStore } from '../state/mcp-state.js';

function out(line: string): void {
  process.stdout.write(line + '\n'); // stdout-ok: admin command output
}

export async function runAdmin(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || !(COMMANDS as readonly string[]).includes(command)) {
    const meant = command === undefined ? undefined : closest(command, COMMANDS);
    throw new UsageError(
      command === undefined
        ? `admin needs a command: ${COMMANDS.join(', ')}`
        : `unknown admin command: ${command}: ${meant ? `did you mean ${meant}? ` : ''}the commands are ${COMMANDS.join(', ')}`,
    );
  }
  const { values } = parse(rest, HELP.admin.flags);
  const need = (name: 'owner' | 'account' | 'contact' | 'bot'): number => {
    const v = intFlag(values[name], name, 1);
    if (v === undefined) throw new UsageError(`admin ${command} needs --${name} ID`);
    return v;
  };
  if (values.db === '') throw new UsageError('--db needs a file path');
  const loc = locateDb(values.db as string | undefined);
  const store = await openStore(loc, { create: false });
  const found = (ok: boolean | undefined, what: string) => {
    if (!ok) throw new UsageError(`${what} not found`);
  };
  try {
    switch (command as (typeof COMMANDS)[number]) {
      case 'regenerate-key':
      case 'reset-password': {
        const id = need('owner');
        const key = store.owners.regenerateKey(id);
        found(key !== undefined, `owner ${id}`);
        out(key!);
        break;
      }
      case 'set-plan': {
        const id = need('owner');
        const plan = values.plan;
        if (plan !== 'pro' && plan !== 'free') throw new UsageError('--plan must be pro or free');
        found(store.owners.setPlan(id, plan), `owner ${id}`);
        break;
      }
      case 'block-owner':
      case 'unblock-owner': {
        const id = need('owner');
        found(store.owners.setBlocked(id, command === 'block-owner'), `owner ${id}`);
        break;
      }
      case 'block-account':
      case 'unblock-account': {
        const id = need('account');
        found(store.admin.setAccountBlocked(id, command === 'block-account'), `account ${id}`);
        break;
      }
      case 'delete-contact': {
        const id = need('contact');
        found(store.admin.deleteContact(id), `contact ${id}`);
        break;
      }
      case 'delete-bot': {
        const id = need('bot');
        found(store.projects.deleteBot(id), `bot ${id}`);
        break;
      }
      case 'journal': {
        const id = need('account');
        const rows = store.admin.journal(id);
        found(rows !== undefined, `account ${id}`);
        for (const r of rows!) out(JSON.stringify(r));
        break;
      }
      case 'conversation': {
        const id = need('contact');
        const rows = store.admin.conversation(id);
        found(rows !== undefined, `contact ${id}`);
        for (const r of rows!) out(JSON.stringify(r));
        break;
      }
      case 'audit':
        auditView(store, values);
        break;
      case 'grants':
      case 'revoke-grant':
        await withGrants(store, loc.url === undefined ? loc.file : undefined, (grants) => {
          if (command === 'grants') for (const g of grants.grants()) out(grantLine(g));
          else for (const g of revokeGrants(grants, values)) out(grantLine(g));
        });
        break;
      case 'deprecate': {
        const method = values.method;
        if (typeof method !== 'string' || !method) throw new UsageError('admin deprecate needs --method NAME');
        if (!findMethod(method)) throw new UsageError(`unknown method: ${method} (a method name or alias of the API)`);
        if (typeof values.sunset !== 'string') throw new UsageError('admin deprecate needs --sunset ISO8601');
        let sunset: string;
        try {
          sunset = normalizeTime(values.sunset);
        } catch {
          throw new UsageError('--sunset must be an ISO 8601 time');
        }
        store.settings.setDeprecation(method, sunset);
        break;
      }
    }
  } finally {
    store.close();
  }
}

/**
 * OAuth sign-in's grants (`mcp --http --auth oauth`), in the MCP server's own state: on
 * PostgreSQL the database's, on SQLite the state file in the data folder (WORKSPACE_DATA_DIR,
 * else the database's folder). No state file yet: no grant.
 */
async function withGrants(store: StoreApi, dbFile: string | undefined, use: (grants: Grants) => void): Promise<void> {
  if (dbFile === undefined) {
    const { PgMcpState } = await import('../state/pg/mcp-state.js');
    return use(new PgMcpState((store as PgStore).conn).oauth());
  }
  const file = join(dataDirFor(dbFile), MCP_STATE_FILE);
  if (!existsSync(file)) return use(NO_GRANTS);
  const state = McpStateStore.open(file);
  try {
    use(state.oauth());
  } finally {
    state.close();
  }
}

/** The grants of a server that never kept any. */
const NO_GRANTS: Grants = { grants: () => [], grant: () => undefined, revokeGrant: () => false };

/** `revoke-grant --grant ID` or `--owner ID` (every grant of theirs not yet revoked): the grants revoked, as they are now. */
function revokeGrants(grants: Grants, values: Record<string, unknown>): GrantRow[] {
  const at = new Date().toISOString();
  const why = 'revoked by an administrator';
  if (values.grant !== undefined && values.owner !== undefined)
    throw new UsageError('admin revoke-grant takes --grant ID or --owner ID, not both');
  if (typeof values.grant === 'string' && values.grant) {
    const id = values.grant;
    const g = grants.grant(id);
    if (!g) throw new UsageError(`grant ${id} not found (admin grants lists them)`);
    if (g.revoked_at !== null) throw new UsageError(`grant ${id} was already revoked at ${g.revoked_at} (${g.revoked_why})`);
    grants.revokeGrant(id, why, at);
    return [grants.grant(id)!];
  }
  const owner = intFlag(values.owner, 'owner', 1);
  if (owner === undefined) throw new UsageError('admin revoke-grant needs --grant ID or --owner ID');
  const open = grants.grants().filter((g) => g.owner_id === owner && g.revoked_at === null);
  if (open.length === 0) throw new UsageError(`owner ${owner} has no grant to revoke`);
  for (const g of open) grants.revokeGrant(g.id, why, at);
  return open.map((g) => grants.grant(g.id)!);
}

/** A grant as `admin grants` prints it: never its sealed key. */
function grantLine(g: GrantRow): string {
  const { id, owner_id, client_id, client_name, created_at, last_used_at, revoked_at, revoked_why } = g;
  return JSON.stringify({ id, owner_id, client_id, client_name, created_at, last_used_at, revoked_at, revoked_why });
}

/** An ISO 8601 flag as the entries write times (toISOString, milliseconds kept). */
function timeFlag(values: Record<string, unknown>, name: 'since' | 'until'): string | undefined {
  if (values[name] === undefined) return undefined;
  const t = new Date(values[name] as string);
  if (Number.isNaN(t.getTime())) throw new UsageError(`--${name} must be an ISO 8601 time`);
  return t.toISOString();
}

/**
 * `admin audit`: the MCP audit trail of every person, oldest first like the journal, read page by
 * page from the newest, filtered by the store (`--contact`, `--owner`, `--client`, `--since`,
 * `--until`: SQL conditions). JSON lines (the entries, with their money) or CSV (AUDIT_COLUMNS).
 */
function auditView(store: StoreApi, values: Record<string, unknown>): void {
  const format = values.format ?? 'jsonl';
  if (format !== 'jsonl' && format !== 'csv') throw new UsageError('--format must be jsonl or csv');
  if (values.client === '') throw new UsageError('--client needs an OAuth client id or name, or an MCP client name');
  const q: Omit<TrailQuery, 'limit'> = {
    contact: intFlag(values.contact, 'contact', 1),
    since: timeFlag(values, 'since'),
    until: timeFlag(values, 'until'),
    client: values.client as string | undefined,
  };
  const owner = intFlag(values.owner, 'owner', 1);
  if (owner !== undefined) q.owner = owner;
  const entries: Array<AuditEntry & { seq: number }> = [];
  let before: number | undefined;
  do {
    const page = store.audit.read({ ...q, before, limit: 1000 });
    entries.push(...page.entries);
    before = page.next;
  } while (before !== undefined);
  entries.reverse();
  if (format === 'jsonl') {
    for (const e of entries) out(JSON.stringify({ ...e, arguments: unsaid(e.arguments), money: moneyOf(e) }));
    return;
  }
  // RFC 4180: CRLF after every record, the header's too.
  const row = (cells: unknown[]) => process.stdout.write(cells.map(csvCell).join(',') + '\r\n'); // stdout-ok: admin command output
  row([...AUDIT_COLUMNS]);
  for (const e of entries) row(csvRow(e));
}

/** The CSV's columns, in order (docs/money-safety.md lists them). */
const AUDIT_COLUMNS = [
  'seq',
  'at',
  'owner_id',
  'oauth_client_id',
  'oauth_client_name',
  'mcp_client',
  'mcp_client_version',
  'grant_scopes',
  'tool',
  'contact_id',
  'account_id',
  'direction',
  'amount',
  'currency',
  'status',
  'code',
  'replayed',
  'confirmed_how',
] as const;

function csvRow(e: AuditEntry & { seq: number }): unknown[] {
  const m = moneyOf(e);
  const account = e.arguments.account_id;
  return [
    e.seq,
    e.at,
    e.owner_id,
    e.oauth_client?.id,
    e.oauth_client?.name,
    e.client?.name,
    e.client?.version,
    e.grant_scopes?.join(' '),
    e.tool,
    e.contact_id,
    typeof account === 'number' ? account : null,
    m?.direction,
    m?.amount,
    m?.currency,
    e.status,
    e.code,
    e.replayed,
    e.confirmation?.how,
  ];
}

/** One CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break; absent: empty. */
function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Argument names never shown here: a secret's (as the trail redacts them) and a message's text. */
const UNSAID = /key|secret|token|password|authorization|cookie|^text$/i;

/** The arguments without what the operator's view never shows, at any depth (runBulk's action.text too). */
function unsaid<T>(value: T): T {
  if (Array.isArray(value)) return value.map(unsaid) as T;
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, UNSAID.test(k) ? '[redacted]' : unsaid(v)])) as T;
}

/**
 * The money an entry's call moved, from its arguments and outcome alone: a money method's amount
 * in minor units and its direction; the currency where the arguments name it (a move names its
 * account, not the account's currency: null). Null when the call moved none: another tool, a
 * failure, a replay (the first call moved it). A bulk plan's runBulk entry moves none itself:
 * each step is its money method's own entry.
 */
function moneyOf(e: AuditEntry): { direction: 'credit' | 'debit'; amount: number; currency: string | null } | null {
  const def = findMethod(e.tool);
  if (!def || !isMoney(def) || !isSuccess(e.status) || e.replayed || typeof e.arguments.amount !== 'number') return null;
  const currency = e.arguments.currency;
  return { direction: def.money, amount: e.arguments.amount, currency: typeof currency === 'string' ? currency : null };
}
