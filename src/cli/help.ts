/**
 * Every command's flags, as its parser takes them (each command parses with its table here),
 * and the help text made from the same tables: a flag the parser takes is in the help, and the
 * help names no flag the parser refuses. The environment variables the program reads are listed
 * once, for `workspace-mcp --help`.
 */
import { readFileSync } from 'node:fs';
import { RESULT_BUDGET } from '../mcp/result/budget.js';

/** A flag: its parser type, the value it takes (for the help), and what it does. */
interface Flag {
  type: 'string' | 'boolean';
  value?: string;
  help: string;
}

export type Flags = Record<string, Flag>;

const db = (what: string): Flag => ({ type: 'string', value: 'FILE|URL', help: what });

const MCP: Flags = {
  db: db('the database: a SQLite file (made on the first start) or a postgres:// URL (default: workspace.db in the data folder)'),
  'rate-limit': { type: 'string', value: 'N', help: 'requests a minute per owner (default 0: no limit)' },
  remote: {
    type: 'string',
    value: 'BASE_URL',
    help: "a Workspace API's base URL (https://host/api/v1) instead of a database; the key in WORKSPACE_API_KEY",
  },
  http: { type: 'boolean', help: 'serve Streamable HTTP (at /mcp) instead of stdio' },
  port: { type: 'string', value: 'N', help: "--http's port (default 8765; 0: any free port)" },
  host: {
    type: 'string',
    value: 'H',
    help: "--http's address (default 127.0.0.1; another needs a bearer token, made if WORKSPACE_MCP_TOKEN is unset)",
  },
  'allowed-hosts': {
    type: 'string',
    value: 'a,b,...',
    help: "--http: more host names requests may carry (a proxy's); bound to 0.0.0.0, only these, the loopback ones and --public-url's",
  },
  scopes: {
    type: 'string',
    value: 'a,b,...',
    help: '--http: the most any request may reach: workspace:read (always), workspace:write, workspace:money, workspace:message (default: all)',
  },
  auth: {
    type: 'string',
    value: 'token|key|oauth',
    help: "--http's callers: token (default: WORKSPACE_MCP_TOKEN, one owner), key (each request's own API key as its bearer) or oauth (each person signs in)",
  },
  'public-url': {
    type: 'string',
    value: 'URL',
    help: '--auth oauth: the https:// address people reach the server at (the MCP endpoint is URL/mcp; http:// on loopback, for trials)',
  },
  'person-rate': {
    type: 'string',
    value: 'N',
    help: '--auth key|oauth: requests a minute each person may make (default 600; 0: no limit)',
  },
  'drain-timeout': {
    type: 'string',
    value: 'S',
    help: '--http: on SIGTERM, how long requests in hand may finish before the process exits anyway (default 30)',
  },
  'read-only': { type: 'boolean', help: 'only the tools that change nothing' },
  tools: { type: 'string', value: 'a,b,...', help: 'only these tools' },
  'exclude-tools': { type: 'string', value: 'a,b,...', help: 'every tool but these' },
  bot: { type: 'string', value: 'ID', help: "the default bot, used where a tool's bot_id is left out (default: the owner's only bot)" },
  project: { type: 'string', value: 'UUID', help: 'a project getWorkspace lists (--remote: the API cannot list projects)' },
  'max-amount': {
    type: 'string',
    value: 'AMOUNT|off',
    help: 'most money one call moves without asking the person (major units; --remote default 100.00)',
  },
  'max-daily': {
    type: 'string',
    value: 'AMOUNT|off',
    help: 'most money moved per account per 24 h without asking (--remote default 500.00)',
  },
  'money-policy': { type: 'string', value: 'FILE', help: 'JSON {"max_amount": …, "max_daily": …}, an amount or one per currency code' },
  'no-confirm': { type: 'boolean', help: 'over a cap, move the money without asking anyone (automation only)' },
  'no-ui': { type: 'boolean', help: 'serve no MCP Apps views' },
  'max-result-chars': { type: 'string', value: 'N', help: `most characters of a tool result (default ${RESULT_BUDGET})` },
};

const SERVE: Flags = {
  db: db('the database: a SQLite file or a postgres:// URL (default: workspace.db in the data folder)'),
  port: { type: 'string', value: 'N', help: 'the port (default 8080; 0: any free port)' },
  host: { type: 'string', value: 'H', help: 'the address to listen on (default 127.0.0.1; 0.0.0.0: every interface)' },
  'rate-limit': { type: 'string', value: 'N', help: "requests a minute per owner (default 120, the spec's; 0: no limit)" },
  'drain-timeout': {
    type: 'string',
    value: 'S',
    help: 'on SIGTERM, how long requests in hand may finish before the process exits anyway (default 30)',
  },
};

const SEED: Flags = {
  db: db('the database to load into (made when new; default: workspace.db in the data folder)'),
};

const ADMIN: Flags = {
  db: db('the database (an existing one; default: workspace.db in the data folder)'),
  owner: {
    type: 'string',
    value: 'ID',
    help: 'the owner (regenerate-key, reset-password, set-plan, block-owner, unblock-owner; revoke-grant: all their grants; audit: only their entries)',
  },
  grant: { type: 'string', value: 'ID', help: 'the OAuth grant (revoke-grant)' },
  account: { type: 'string', value: 'ID', help: 'the contact account (block-account, unblock-account, journal)' },
  contact: { type: 'string', value: 'ID', help: 'the contact (delete-contact, conversation; audit: only its entries)' },
  bot: { type: 'string', value: 'ID', help: 'the bot (delete-bot)' },
  plan: { type: 'string', value: 'pro|free', help: 'the plan (set-plan)' },
  method: { type: 'string', value: 'NAME', help: 'the API method (deprecate)' },
  sunset: { type: 'string', value: 'ISO8601', help: 'when the method is switched off (deprecate)' },
  since: { type: 'string', value: 'ISO8601', help: 'entries from this time on (audit)' },
  until: { type: 'string', value: 'ISO8601', help: 'entries before this time (audit)' },
  client: {
    type: 'string',
    value: 'NAME',
    help: "only the entries of this client (audit): an OAuth client's id or name, or an MCP client's name",
  },
  format: { type: 'string', value: 'jsonl|csv', help: 'the output (audit; default jsonl): JSON lines, or CSV with a header row' },
};

const DEMO: Flags = {
  db: db('the database to make (default: demo.db in the data folder)'),
};

export const ADMIN_COMMANDS = [
  'regenerate-key',
  'reset-password',
  'set-plan',
  'block-owner',
  'unblock-owner',
  'block-account',
  'unblock-account',
  'delete-contact',
  'delete-bot',
  'journal',
  'conversation',
  'deprecate',
  'audit',
  'grants',
  'revoke-grant',
] as const;

export interface Command {
  usage: string;
  about: string;
  flags: Flags;
  /** Lines after the flags. */
  more?: string[];
}

/** The commands, in the order the help lists them. */
export const COMMANDS = {
  mcp: {
    usage: 'workspace-mcp [mcp] [flags]',
    about: 'The MCP server (the default command): over stdio for an MCP client, or --http.',
    flags: MCP,
  },
  demo: {
    usage: 'workspace-mcp demo [--db FILE|URL]',
    about:
      'Make a database with the demo data (again: nothing changes) and print the config to paste into Claude Desktop, Claude Code or Cursor.',
    flags: DEMO,
  },
  serve: {
    usage: 'workspace-mcp serve [flags]',
    about: 'The Workspace API over HTTP, at http://HOST:PORT/api/v1/<method>; every owner with their key.',
    flags: SERVE,
  },
  seed: {
    usage: 'workspace-mcp seed FIXTURE.json [--db FILE|URL]',
    about: 'Load a fixture (owners, projects, bots, contacts, accounts) in one transaction: all of it, or nothing.',
    flags: SEED,
  },
  admin: {
    usage: 'workspace-mcp admin COMMAND [flags]',
    about: 'The operations of the platform dashboard; their output on stdout.',
    flags: ADMIN,
    more: [
      'commands:',
      '  regenerate-key, reset-password --owner ID   a new API key (printed); the old one stops working',
      '  set-plan --owner ID --plan pro|free',
      '  block-owner, unblock-owner --owner ID',
      '  block-account, unblock-account --account ID',
      '  delete-contact --contact ID',
      '  delete-bot --bot ID',
      "  journal --account ID                        an account's operations, JSON lines",
      "  conversation --contact ID                   a contact's messages, JSON lines",
      '  audit [--owner ID] [--client NAME] [--contact ID] [--since ISO8601] [--until ISO8601] [--format jsonl|csv]',
      "                                              every person's MCP audit trail (no key, no message text), JSON lines or CSV",
      '  deprecate --method NAME --sunset ISO8601    the method answers with Deprecation and Sunset, then 410',
      "  grants                                      mcp --auth oauth's grants (who signed in, through which app), JSON lines",
      "  revoke-grant --grant ID | --owner ID        the grant (or all of an owner's) stops; its app must sign in again",
    ],
  },
} satisfies Record<string, Command>;

export type CommandName = keyof typeof COMMANDS;

/** The environment variables the program reads. */
const ENVIRONMENT: Array<[string, string]> = [
  ['WORKSPACE_DB', 'the database, when --db is not given (a file or a postgres:// URL)'],
  ['DATABASE_URL', 'a postgres:// URL, used when neither --db nor WORKSPACE_DB is given'],
  [
    'WORKSPACE_SECRET',
    "64 hex characters that open the database's encrypted values and seal signed-in keys (required on PostgreSQL and with --remote --auth oauth; else kept in FILE.secret)",
  ],
  ['WORKSPACE_API_KEY', "mcp: the owner's key to act as (default: the database's default owner); --remote: your key"],
  ['WORKSPACE_BASE_URL', 'mcp: the remote API, when neither --db nor --remote is given'],
  ['WORKSPACE_BOT_ID', 'mcp: the default bot, when --bot is not given'],
  ['WORKSPACE_PROJECT_UUID', 'mcp: as --project'],
  ['WORKSPACE_MAX_AMOUNT', 'mcp: as --max-amount'],
  ['WORKSPACE_MAX_DAILY', 'mcp: as --max-daily'],
  ['WORKSPACE_MONEY_POLICY', 'mcp: as --money-policy'],
  ['WORKSPACE_MCP_TOKEN', 'mcp --http: the bearer token clients must send'],
  ['WORKSPACE_DATA_DIR', "mcp: an existing folder for exports and the server's state (default: the database's folder)"],
  ['WORKSPACE_PG_POOL', 'PostgreSQL: service threads, each with a connection (default 4)'],
  ['WORKSPACE_PG_STATEMENT_TIMEOUT_MS', 'PostgreSQL: a longer statement is cancelled, its call answers 503 (default 15000)'],
  ['WORKSPACE_LOG_LEVEL', 'log level on stderr: trace, debug, info (default), warn, error, fatal, silent'],
  ['XDG_DATA_HOME', 'Linux: the data folder is $XDG_DATA_HOME/workspace-mcp (default ~/.local/share/workspace-mcp)'],
  ['APPDATA', 'Windows: the data folder is %APPDATA%\\workspace-mcp (macOS: ~/Library/Application Support/workspace-mcp)'],
];

/**
 * Knobs for measuring the server itself, not for using it: listed apart from ENVIRONMENT, so
 * that a user reading the variables they may set does not take them for settings of theirs.
 */
const TUNING: Array<[string, string]> = [
  ['WORKSPACE_JIT', 'default: leave V8 as it is (else, on Node 20, a server that is up optimises its call paths sooner)'],
];

/** The package's version, from its package.json (beside dist/ in a checkout and an install). */
export function version(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

function flagLines(flags: Flags): string[] {
  const left = Object.entries(flags).map(([name, f]) => `--${name}${f.value ? ` ${f.value}` : ''}`);
  const width = Math.max(...left.map((l) => l.length)) + 2;
  return Object.values(flags).map((f, i) => `  ${left[i]!.padEnd(width)}${f.help}`);
}

/** One command's help: usage, what it does, every flag its parser takes. */
export function commandHelp(name: CommandName): string {
  const c: Command = COMMANDS[name];
  return [
    `usage: ${c.usage}`,
    '',
    c.about,
    '',
    'flags:',
    ...flagLines(c.flags),
    ...(c.more ? ['', ...c.more] : []),
    '',
    '  -h, --help  this help',
  ].join('\n');
}

/** The whole help: every command with every flag, and the environment. */
export function mainHelp(): string {
  const width = Math.max(...[...ENVIRONMENT, ...TUNING].map(([n]) => n.length)) + 2;
  const out = [
    `workspace-mcp ${version()}: an MCP server and a local Workspace API (SQLite or PostgreSQL)`,
    '',
    'usage:',
    ...Object.values(COMMANDS).map((c) => `  ${c.usage}`),
    '  workspace-mcp --version | --help | COMMAND --help',
  ];
  for (const [name, c] of Object.entries(COMMANDS) as Array<[CommandName, Command]>) {
    out.push('', `${name}: ${c.about}`, ...flagLines(c.flags));
    if (c.more) out.push(...c.more.map((l) => `  ${l}`));
  }
  const rows = (list: Array<[string, string]>) => list.map(([n, what]) => `  ${n.padEnd(width)}${what}`);
  out.push('', 'environment:', ...rows(ENVIRONMENT));
  out.push('', 'tuning (for measuring the server; leave unset):', ...rows(TUNING));
  return out.join('\n');
}
