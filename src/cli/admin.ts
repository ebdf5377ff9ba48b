/** `workspace-mcp admin`: the dashboard operations that are not API methods. */
import { findMethod } from '../api/catalog.js';
import { openStore } from './open.js';
import { locateDb } from './paths.js';
import { normalizeTime } from '../store/time.js';
import { intFlag, parse, UsageError } from './args.js';
import { ADMIN_COMMANDS as COMMANDS, COMMANDS as HELP } from './help.js';

function out(line: string): void {
  process.stdout.write(line + '\n'); // stdout-ok: admin command output
}

export async function runAdmin(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || !(COMMANDS as readonly string[]).includes(command)) throw new UsageError(`admin needs a command: ${COMMANDS.join(', ')}`);
  const { values } = parse(rest, HELP.admin.flags);
  const need = (name: 'owner' | 'account' | 'contact' | 'bot'): number => {
    const v = intFlag(values[name], name, 1);
    if (v === undefined) throw new UsageError(`admin ${command} needs --${name} ID`);
    return v;
  };
  if (values.db === '') throw new UsageError('--db needs a file path');
  const store = await openStore(locateDb(values.db as string | undefined), { create: false });
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
      case 'audit': {
        // The MCP audit trail, oldest first like the journal, page by page from the newest.
        const contact = intFlag(values.contact, 'contact', 1);
        let since: string | undefined;
        if (values.since !== undefined) {
          // Entries keep milliseconds (toISOString), so the bound is written the same way.
          const t = new Date(values.since as string);
          if (Number.isNaN(t.getTime())) throw new UsageError('--since must be an ISO 8601 time');
          since = t.toISOString();
        }
        const entries = [];
        let before: number | undefined;
        do {
          const page = store.audit.read({ contact, since, before, limit: 1000 });
          entries.push(...page.entries);
          before = page.next;
        } while (before !== undefined);
        for (const e of entries.reverse()) out(JSON.stringify(e));
        break;
      }
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
