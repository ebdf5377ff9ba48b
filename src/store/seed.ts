/**
 * Loading a fixture (the contract's format) in one transaction: on any bad entry nothing is
 * written and the error names the entry (`contacts[3] (id 1004): ...`).
 */
import { findMethod } from '../api/catalog.js';
import { isCurrency } from '../api/currency.js';
import { DEFAULT_OWNER_SETTING } from './settings.js';
import type { Messenger } from './contacts.js';
import type { StoreApi } from './store-api.js';
import { isoTime, normalizeTime, unixSeconds } from './time.js';

export class FixtureError extends Error {}

/** An entry whose id (or other unique field) the database already holds: a database used before, not a bad fixture. */
/** An entry whose id, or a field that must be unique, is taken: by what the database held, or by an earlier entry of the fixture. */
export class FixtureClash extends FixtureError {
  constructor(readonly where: string) {
    super(`${where}: its id, or a field that must be unique, is taken already (by the database or an earlier entry of the fixture)`);
  }
}

/** A unique key refused by the database: SQLite's constraint codes, PostgreSQL's SQLSTATE 23505. */
function isClash(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

type Obj = Record<string, unknown>;

const MESSENGERS = ['telegram', 'max', 'viber', 'vk', 'web'];

function entries(fixture: Obj, key: string): Obj[] {
  const v = fixture[key];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new FixtureError(`${key}: must be an array`);
  return v.map((e, i) => {
    if (!e || typeof e !== 'object' || Array.isArray(e)) throw new FixtureError(`${key}[${i}]: must be an object`);
    return e as Obj;
  });
}

/** Field readers that throw with the entry's name. */
function reader(where: string, e: Obj) {
  const bad = (field: string, what: string) => new FixtureError(`${where}: ${field} ${what}`);
  return {
    str(field: string, required = false): string | null {
      const v = e[field];
      if (v === undefined || v === null) {
        if (required) throw bad(field, 'is required');
        return null;
      }
      if (typeof v !== 'string') throw bad(field, 'must be a string');
      return v;
    },
    int(field: string, required = false): number | null {
      const v = e[field];
      if (v === undefined || v === null) {
        if (required) throw bad(field, 'is required');
        return null;
      }
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(field, 'must be an integer');
      return v;
    },
    bool(field: string): boolean {
      const v = e[field];
      if (v === undefined || v === null) return false;
      if (typeof v !== 'boolean') throw bad(field, 'must be true or false');
      return v;
    },
    time(field: string): string | null {
      const v = this.str(field);
      if (v === null) return null;
      try {
        return normalizeTime(v);
      } catch {
        throw bad(field, 'must be an ISO 8601 time');
      }
    },
    bad,
  };
}

function label(key: string, i: number, e: Obj): string {
  const id = e.id ?? e.uuid ?? e.method;
  return id === undefined ? `${key}[${i}]` : `${key}[${i}] (${typeof id === 'string' ? id : `id ${String(id)}`})`;
}

/**
 * A database that `serve` or `mcp` opened first holds the default owner, project and bot. When
 * the fixture names the same owner or bot id and that default world is still untouched (no
 * contacts, lists or team members), it makes way for the fixture instead of failing the seed.
 */
function clearUntouchedDefaultWorld(store: StoreApi, f: Obj): void {
  const setting = store.settings.get(DEFAULT_OWNER_SETTING);
  if (setting === undefined) return;
  const ownerId = Number(setting);
  const botIds = store.fixtures.allBotIds(ownerId);
  const ids = (key: string) => (Array.isArray(f[key]) ? (f[key] as Obj[]).map((e) => Number(e?.id)) : []);
  const collides = ids('owners').includes(ownerId) || ids('bots').some((id) => botIds.includes(id));
  if (!collides || store.fixtures.worldUsed(ownerId)) return;
  store.fixtures.removeOwner(ownerId);
  store.settings.remove(DEFAULT_OWNER_SETTING);
}

/** Load a parsed fixture into the store. Throws FixtureError, having written nothing. */
export function loadFixture(store: StoreApi, fixture: unknown): Record<string, number> {
  if (!fixture || typeof fixture !== 'object' || Array.isArray(fixture)) throw new FixtureError('the fixture must be a JSON object');
  const f = fixture as Obj;
  const rows = store.fixtures;
  const counts: Record<string, number> = {};
  const run = (key: string, fn: (e: Obj, where: string) => void) => {
    const list = entries(f, key);
    list.forEach((e, i) => {
      const where = label(key, i, e);
      try {
        fn(e, where);
      } catch (err) {
        if (err instanceof FixtureError) throw err;
        if (isClash(err)) throw new FixtureClash(where);
        const msg = err instanceof Error ? err.message : String(err);
        throw new FixtureError(`${where}: ${msg.replace(/^SQLITE_\w+: /, '')}`);
      }
    });
    counts[key] = list.length;
  };

  store.tx(() => {
    clearUntouchedDefaultWorld(store, f);
    run('owners', (e, where) => {
      const r = reader(where, e);
      const plan = r.str('plan') ?? 'pro';
      if (plan !== 'pro' && plan !== 'free') throw r.bad('plan', 'must be "pro" or "free"');
      const key = r.str('api_key');
      if (key !== null && store.owners.byKey(key)) throw r.bad('api_key', 'is already used by another owner');
      const ownerId = store.owners.insert({
        id: r.int('id', true),
        name: r.str('name', true)!,
        email: r.str('email'),
        phone: r.str('phone'),
        plan,
        blocked: r.bool('blocked'),
        api_key: key,
        created_at: r.time('created_at') ?? undefined,
      });
      // The platform balance (getBalance), in minor units; optional.
      const balance = r.int('balance');
      const currency = r.str('currency');
      if (currency !== null && !isCurrency(currency)) throw r.bad('currency', 'must be an ISO 4217 code in capitals');
      if (balance !== null && balance < 0) throw r.bad('balance', 'must not be negative');
      if (balance !== null || currency !== null) store.balance.set(ownerId, balance ?? 0, currency ?? 'USD');
    });
    run('projects', (e, where) => {
      const r = reader(where, e);
      const owner = r.int('owner_id', true)!;
      if (!store.owners.get(owner)) throw r.bad('owner_id', `${owner} does not exist`);
      store.projects.insert({ uuid: r.str('uuid', true)!, owner_id: owner, name: r.str('name') ?? 'Project' });
    });
    run('members', (e, where) => {
      const r = reader(where, e);
      const owner = r.int('owner_id', true)!;
      const project = r.str('project_uuid', true)!;
      if (!store.owners.get(owner)) throw r.bad('owner_id', `${owner} does not exist`);
      if (!store.projects.get(project)) throw r.bad('project_uuid', `${project} does not exist`);
      store.projects.insertMember({ owner_id: owner, project_uuid: project });
    });
    run('bots', (e, where) => {
      const r = reader(where, e);
      const project = r.str('project_uuid', true)!;
      if (!store.projects.get(project)) throw r.bad('project_uuid', `${project} does not exist`);
      store.projects.insertBot({ id: r.int('id', true), project_uuid: project, name: r.str('name') ?? 'Bot', deleted: r.bool('deleted') });
    });
    const referrers: Array<[number, number, string]> = [];
    // Bots found once: a large fixture's contacts would otherwise look up their bot each.
    const bots = new Set<number>();
    run('contacts', (e, where) => {
      const r = reader(where, e);
      const id = r.int('id', true)!;
      const botId = r.int('bot_id', true)!;
      if (!bots.has(botId)) {
        if (!store.projects.bot(botId)) throw r.bad('bot_id', `${botId} does not exist`);
        bots.add(botId);
      }
      const messenger = r.str('messenger', true)!;
      if (!MESSENGERS.includes(messenger)) throw r.bad('messenger', `must be one of ${MESSENGERS.join(', ')}`);
      const createdAt = r.time('created_at') ?? isoTime();
      const phone = r.str('phone');
      const telegramId = e.telegram_id === undefined || e.telegram_id === null ? null : String(e.telegram_id);
      if (messenger === 'telegram' && telegramId === null) throw r.bad('telegram_id', 'is required for telegram');
      if (messenger === 'max' && r.int('max_user_id') === null) throw r.bad('max_user_id', 'is required for max');
      if (messenger === 'vk' && r.int('vk_user_id') === null) throw r.bad('vk_user_id', 'is required for vk');
      if (messenger === 'viber' && r.str('viber_id') === null) throw r.bad('viber_id', 'is required for viber');
      const deleted = r.bool('deleted');
      const preview = r.bool('preview');
      rows.insertContact({
        id,
        bot_id: botId,
        messenger: messenger as Messenger,
        name: r.str('name', true)!,
        phone: phone === null ? null : phone.replace(/^\+/, ''),
        email: r.str('email'),
        address: r.str('address'),
        avatar: r.str('avatar'),
        telegram_id: messenger === 'telegram' ? telegramId : null,
        telegram_username: messenger === 'telegram' ? r.str('telegram_username') : null,
        max_user_id: messenger === 'max' ? r.int('max_user_id') : null,
        max_username: messenger === 'max' ? r.str('max_username') : null,
        vk_user_id: messenger === 'vk' ? r.int('vk_user_id') : null,
        viber_id: messenger === 'viber' ? r.str('viber_id') : null,
        created_at: createdAt,
        created_ts: unixSeconds(createdAt),
        unsubscribed_at: r.time('unsubscribed_at'),
        preview: preview ? 1 : 0,
        deleted_at: deleted ? isoTime() : null,
      });
      const ref = r.int('referrer_id');
      if (ref !== null) referrers.push([id, ref, where]);
      if (!preview && !deleted) rows.bumpSubscribers(botId);
      const tags = e.tags ?? [];
      if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string')) throw r.bad('tags', 'must be an array of strings');
      [...new Set(tags as string[])].forEach((t, i) => rows.insertTag(id, i, t));
      const vars = e.variables ?? [];
      if (!Array.isArray(vars)) throw r.bad('variables', 'must be an array');
      vars.forEach((v: unknown, i) => {
        const vr = reader(`${where} variables[${i}]`, (v ?? {}) as Obj);
        const type = vr.int('type') ?? 0;
        if (type < 0 || type > 4) throw vr.bad('type', 'must be 0 to 4');
        const value = (v as Obj).value;
        if (type > 0 && (typeof value !== 'string' || !/^https?:\/\/\S+$/i.test(value)))
          throw vr.bad('value', 'must be a file URL (http or https) for a media variable (type 1 to 4)');
        rows.insertVariable(
          id,
          vr.str('name', true)!,
          value === null || value === undefined ? null : String(value),
          type,
          vr.bool('deletable'),
        );
      });
    });
    for (const [id, ref, where] of referrers) {
      if (!rows.contactExists(ref)) throw new FixtureError(`${where}: referrer_id ${ref} does not exist`);
      rows.setReferrer(id, ref);
    }
    run('accounts', (e, where) => {
      const r = reader(where, e);
      const contact = r.int('contact_id', true)!;
      if (!rows.contactExists(contact)) throw r.bad('contact_id', `${contact} does not exist`);
      const currency = r.str('currency', true)!;
      if (!isCurrency(currency)) throw r.bad('currency', 'must be an ISO 4217 code in capitals');
      const amount = r.int('amount') ?? 0;
      if (amount < 0) throw r.bad('amount', 'must not be negative');
      const now = isoTime();
      const accountId = rows.insertAccount({
        id: r.int('id'),
        contact_id: contact,
        currency,
        amount,
        now,
        blocked_at: r.bool('blocked') ? now : null,
      });
      if (amount > 0) rows.openingBalance(accountId, amount, now);
    });
    run('deprecations', (e, where) => {
      const r = reader(where, e);
      const sunset = r.time('sunset');
      if (!sunset) throw r.bad('sunset', 'is required');
      const method = r.str('method', true)!;
      if (!findMethod(method)) throw r.bad('method', `${method} is not a method of the API`);
      store.settings.setDeprecation(method, sunset);
    });
    rows.finish();
  });
  return counts;
}
