/**
 * Numbered, forward-only schema migrations, applied in order under `PRAGMA user_version`.
 * Never edit a released entry: add the next one.
 */
/**
 * The contact search index over a table named `contacts` (the service's, or the remote index's
 * copy, which has the columns used here). Only listed contacts (not preview, not deleted) are
 * indexed. Kept by triggers, so every write to a contact (an upsert, a seed, an admin delete,
 * any insert) updates the index in its own transaction; an update that changes no indexed
 * column leaves it alone. It calls two functions that `db.ts`
 * registers on every connection (`search-text.ts`): `search_words` folds a name for every
 * script; `search_phone` gives a phone's digits last digit first.
 *
 * - `contact_words` (FTS5, contentless, rowid = contact id): the folded name; the handles
 *   (usernames, an email's local part); and `b<bot id>`, so a search within the owner's bots is
 *   one FTS query. Prefix indexes of 2 and 3 characters make short prefixes cheap.
 * - `contact_search_keys`: exact identifiers: `p:` reversed phone digits (a phone suffix is a
 *   key prefix: one index range), `e:` email and `u:` username in ASCII lower case, `i:` a
 *   messenger id (telegram, MAX, VK, Viber).
 *
 * Frozen once released: migration 6 applies it to the service's database.
 */
export const SEARCH_SCHEMA = `
  CREATE VIRTUAL TABLE contact_words USING fts5(
    name, handles, bot,
    content = '', contentless_delete = 1, prefix = '2 3',
    tokenize = 'unicode61 remove_diacritics 2'
  );
  CREATE VIEW contact_words_source AS
    SELECT id, search_words(name) AS name,
      search_words(concat_ws(' ', telegram_username, max_username,
        CASE WHEN instr(email, '@') > 1 THEN substr(email, 1, instr(email, '@') - 1) END)) AS handles,
      'b' || bot_id AS bot
    FROM contacts WHERE preview = 0 AND deleted_at IS NULL;

  CREATE TABLE contact_search_keys (
    key TEXT NOT NULL,
    contact_id INTEGER NOT NULL,
    bot_id INTEGER NOT NULL,
    PRIMARY KEY (key, contact_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX contact_search_keys_contact ON contact_search_keys(contact_id);
  CREATE VIEW contact_search_key_source AS
    SELECT id AS contact_id, bot_id, 'p:' || search_phone(phone) AS key FROM contacts
      WHERE preview = 0 AND deleted_at IS NULL AND phone IS NOT NULL
    UNION ALL SELECT id, bot_id, 'e:' || lower(trim(email)) FROM contacts
      WHERE preview = 0 AND deleted_at IS NULL AND trim(email) <> ''
    UNION ALL SELECT id, bot_id, 'u:' || lower(ltrim(trim(telegram_username), '@')) FROM contacts
      WHERE preview = 0 AND deleted_at IS NULL AND trim(telegram_username) <> ''
    UNION ALL SELECT id, bot_id, 'u:' || lower(ltrim(trim(max_username), '@')) FROM contacts
      WHERE preview = 0 AND deleted_at IS NULL AND trim(max_username) <> ''
    UNION ALL SELECT id, bot_id, 'i:' || coalesce(telegram_id, max_user_id, vk_user_id, viber_id) FROM contacts
      WHERE preview = 0 AND deleted_at IS NULL AND coalesce(telegram_id, max_user_id, vk_user_id, viber_id) IS NOT NULL;

  INSERT INTO contact_words (rowid, name, handles, bot) SELECT id, name, handles, bot FROM contact_words_source;
  INSERT OR IGNORE INTO contact_search_keys (key, contact_id, bot_id)
    SELECT key, contact_id, bot_id FROM contact_search_key_source WHERE key IS NOT NULL;

  CREATE TRIGGER contact_search_insert AFTER INSERT ON contacts
  WHEN NEW.preview = 0 AND NEW.deleted_at IS NULL
  BEGIN
    INSERT INTO contact_words (rowid, name, handles, bot) SELECT id, name, handles, bot FROM contact_words_source WHERE id = NEW.id;
    INSERT OR IGNORE INTO contact_search_keys (key, contact_id, bot_id)
      SELECT key, contact_id, bot_id FROM contact_search_key_source WHERE contact_id = NEW.id AND key IS NOT NULL;
  END;
  CREATE TRIGGER contact_search_update AFTER UPDATE OF id, bot_id, name, phone, email, telegram_id, telegram_username,
    max_user_id, max_username, vk_user_id, viber_id, preview, deleted_at ON contacts
  WHEN (OLD.id, OLD.bot_id, OLD.name, OLD.phone, OLD.email, OLD.telegram_id, OLD.telegram_username, OLD.max_user_id,
      OLD.max_username, OLD.vk_user_id, OLD.viber_id, OLD.preview, OLD.deleted_at)
    IS NOT (NEW.id, NEW.bot_id, NEW.name, NEW.phone, NEW.email, NEW.telegram_id, NEW.telegram_username, NEW.max_user_id,
      NEW.max_username, NEW.vk_user_id, NEW.viber_id, NEW.preview, NEW.deleted_at)
  BEGIN
    DELETE FROM contact_words WHERE rowid = OLD.id;
    DELETE FROM contact_search_keys WHERE contact_id = OLD.id;
    INSERT INTO contact_words (rowid, name, handles, bot) SELECT id, name, handles, bot FROM contact_words_source WHERE id = NEW.id;
    INSERT OR IGNORE INTO contact_search_keys (key, contact_id, bot_id)
      SELECT key, contact_id, bot_id FROM contact_search_key_source WHERE contact_id = NEW.id AND key IS NOT NULL;
  END;
  CREATE TRIGGER contact_search_delete AFTER DELETE ON contacts
  BEGIN
    DELETE FROM contact_words WHERE rowid = OLD.id;
    DELETE FROM contact_search_keys WHERE contact_id = OLD.id;
  END;
`;

/**
 * The name index by bot (migration 9; the remote index file has it too). Migration 6 kept a
 * bot as a term of its own (`b<bot id>`), ANDed into every search: at a million contacts in one
 * bot that term alone cost a search milliseconds. Now each word is kept behind its bot's tag
 * (`search_tagged`, search-text.ts), so a search reads only its bots' terms; prefix indexes of
 * 2 to 6 characters after the 11-character tag make a whole first name as a prefix one term read
 * as it goes, not every term it starts merged first. The `bot` column stays, empty and not
 * indexed, because migration 6's triggers name it (they insert from the view below).
 */
export const SEARCH_BY_BOT = `
  DROP VIEW contact_words_source;
  DROP TABLE contact_words;
  CREATE VIRTUAL TABLE contact_words USING fts5(
    name, handles, bot UNINDEXED,
    content = '', contentless_delete = 1, prefix = '13 14 15 16 17',
    tokenize = 'unicode61 remove_diacritics 2'
  );
  CREATE VIEW contact_words_source AS
    SELECT id, search_tagged(bot_id, name) AS name,
      search_tagged(bot_id, concat_ws(' ', telegram_username, max_username,
        CASE WHEN instr(email, '@') > 1 THEN substr(email, 1, instr(email, '@') - 1) END)) AS handles,
      NULL AS bot
    FROM contacts WHERE preview = 0 AND deleted_at IS NULL;
  INSERT INTO contact_words (rowid, name, handles) SELECT id, name, handles FROM contact_words_source;
`;

/**
 * The body of migration 4's two contact_order triggers (one text, interpolated in both): the
 * bot's row made if missing, and its flag dropped when the contact `NEW` is out of time order
 * with its listed neighbours by id. Frozen with migration 4.
 */
const CONTACT_ORDER_CHECK = `    INSERT OR IGNORE INTO contact_order (bot_id, by_time) VALUES (NEW.bot_id, 1);
    UPDATE contact_order SET by_time = 0
      WHERE bot_id = NEW.bot_id AND by_time = 1 AND (
        (SELECT created_ts FROM contacts WHERE bot_id = NEW.bot_id AND preview = 0 AND deleted_at IS NULL
           AND id < NEW.id ORDER BY id DESC LIMIT 1) > NEW.created_ts
        OR (SELECT created_ts FROM contacts WHERE bot_id = NEW.bot_id AND preview = 0 AND deleted_at IS NULL
           AND id > NEW.id ORDER BY id LIMIT 1) < NEW.created_ts);`;

export const MIGRATIONS: readonly string[] = [
  // 1: the whole first schema.
  `
  CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;

  CREATE TABLE owners (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT,
    phone TEXT,
    plan TEXT NOT NULL DEFAULT 'pro' CHECK (plan IN ('pro', 'free')),
    blocked_at TEXT,
    key_hash TEXT UNIQUE,
    created_at TEXT NOT NULL
  ) STRICT;

  CREATE TABLE projects (
    uuid TEXT PRIMARY KEY,
    owner_id INTEGER NOT NULL REFERENCES owners(id),
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX projects_owner ON projects(owner_id);

  CREATE TABLE members (
    owner_id INTEGER NOT NULL REFERENCES owners(id),
    project_uuid TEXT NOT NULL REFERENCES projects(uuid),
    PRIMARY KEY (owner_id, project_uuid)
  ) STRICT;

  CREATE TABLE bots (
    id INTEGER PRIMARY KEY,
    project_uuid TEXT NOT NULL REFERENCES projects(uuid),
    name TEXT NOT NULL,
    subscriber_count INTEGER NOT NULL DEFAULT 0,
    deleted_at TEXT,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX bots_project ON bots(project_uuid);

  CREATE TABLE contacts (
    id INTEGER PRIMARY KEY,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    messenger TEXT NOT NULL CHECK (messenger IN ('telegram', 'max', 'viber', 'vk', 'web')),
    name TEXT NOT NULL,
    phone TEXT,
    email TEXT,
    address TEXT,
    avatar TEXT,
    telegram_id TEXT,
    telegram_username TEXT,
    max_user_id INTEGER,
    max_username TEXT,
    vk_user_id INTEGER,
    viber_id TEXT,
    created_at TEXT NOT NULL,
    created_ts INTEGER NOT NULL,
    unsubscribed_at TEXT,
    preview INTEGER NOT NULL DEFAULT 0,
    deleted_at TEXT,
    referrer_id INTEGER
  ) STRICT;
  CREATE UNIQUE INDEX contacts_telegram ON contacts(bot_id, telegram_id) WHERE telegram_id IS NOT NULL;
  CREATE UNIQUE INDEX contacts_max ON contacts(bot_id, max_user_id) WHERE max_user_id IS NOT NULL;
  CREATE UNIQUE INDEX contacts_vk ON contacts(bot_id, vk_user_id) WHERE vk_user_id IS NOT NULL;
  CREATE UNIQUE INDEX contacts_viber ON contacts(bot_id, viber_id) WHERE viber_id IS NOT NULL;
  CREATE INDEX contacts_listed ON contacts(bot_id, id) WHERE preview = 0 AND deleted_at IS NULL;
  CREATE INDEX contacts_listed_ts ON contacts(bot_id, created_ts, id) WHERE preview = 0 AND deleted_at IS NULL;
  CREATE INDEX contacts_referrer ON contacts(referrer_id) WHERE referrer_id IS NOT NULL;

  CREATE TABLE contact_tags (
    contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (contact_id, position)
  ) STRICT;

  CREATE TABLE contact_variables (
    id INTEGER PRIMARY KEY,
    contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT,
    type INTEGER NOT NULL DEFAULT 0 CHECK (type BETWEEN 0 AND 4),
    schema_id TEXT,
    deletable INTEGER NOT NULL DEFAULT 0,
    payload TEXT,
    UNIQUE (contact_id, name)
  ) STRICT;

  CREATE TABLE conversation (
    id INTEGER PRIMARY KEY,
    contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
    direction TEXT NOT NULL CHECK (direction IN ('in', 'out')),
    text TEXT,
    image TEXT,
    file TEXT,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX conversation_contact ON conversation(contact_id, id);

  CREATE TABLE contact_accounts (
    id INTEGER PRIMARY KEY,
    contact_id INTEGER NOT NULL REFERENCES contacts(id),
    currency TEXT NOT NULL,
    amount INTEGER NOT NULL DEFAULT 0 CHECK (amount >= 0 AND amount <= 9007199254740991),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    blocked_at TEXT,
    UNIQUE (contact_id, currency)
  ) STRICT;

  CREATE TABLE account_journal (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES contact_accounts(id) ON DELETE CASCADE,
    operation TEXT NOT NULL CHECK (operation IN ('Deposit via API', 'Debit via API', 'Opening balance')),
    amount INTEGER NOT NULL,
    description TEXT NOT NULL,
    balance_after INTEGER NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX account_journal_account ON account_journal(account_id, id);

  CREATE TABLE list_schemas (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    project_uuid TEXT NOT NULL REFERENCES projects(uuid),
    bot_id INTEGER REFERENCES bots(id),
    name TEXT NOT NULL,
    is_menu INTEGER NOT NULL DEFAULT 0,
    fields TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX list_schemas_project ON list_schemas(project_uuid, seq);

  CREATE TABLE list_records (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    schema_seq INTEGER NOT NULL REFERENCES list_schemas(seq) ON DELETE CASCADE,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX list_records_schema ON list_records(schema_seq, seq);

  CREATE TABLE deprecations (
    method TEXT PRIMARY KEY,
    sunset TEXT NOT NULL
  ) STRICT;

  CREATE TABLE idempotency_keys (
    owner_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    method TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (owner_id, key)
  ) STRICT;
  `,
  // 2 (contacts): messenger ids unique among live contacts only, so a deleted contact does not
  // block a new one with its id; per-bot counts of listed contacts by id block (1024 ids), kept
  // by triggers, so that totals and offset positions are read without scanning contacts.
  `
  DROP INDEX contacts_telegram;
  DROP INDEX contacts_max;
  DROP INDEX contacts_vk;
  DROP INDEX contacts_viber;
  CREATE UNIQUE INDEX contacts_telegram ON contacts(bot_id, telegram_id) WHERE telegram_id IS NOT NULL AND deleted_at IS NULL;
  CREATE UNIQUE INDEX contacts_max ON contacts(bot_id, max_user_id) WHERE max_user_id IS NOT NULL AND deleted_at IS NULL;
  CREATE UNIQUE INDEX contacts_vk ON contacts(bot_id, vk_user_id) WHERE vk_user_id IS NOT NULL AND deleted_at IS NULL;
  CREATE UNIQUE INDEX contacts_viber ON contacts(bot_id, viber_id) WHERE viber_id IS NOT NULL AND deleted_at IS NULL;

  CREATE TABLE contact_blocks (
    bot_id INTEGER NOT NULL,
    block INTEGER NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (bot_id, block)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO contact_blocks (bot_id, block, n)
    SELECT bot_id, id >> 10, count(*) FROM contacts WHERE preview = 0 AND deleted_at IS NULL GROUP BY bot_id, id >> 10;

  CREATE TRIGGER contact_blocks_insert AFTER INSERT ON contacts
  WHEN NEW.preview = 0 AND NEW.deleted_at IS NULL
  BEGIN
    INSERT INTO contact_blocks (bot_id, block, n) VALUES (NEW.bot_id, NEW.id >> 10, 1)
      ON CONFLICT (bot_id, block) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER contact_blocks_delete AFTER DELETE ON contacts
  WHEN OLD.preview = 0 AND OLD.deleted_at IS NULL
  BEGIN
    UPDATE contact_blocks SET n = n - 1 WHERE bot_id = OLD.bot_id AND block = OLD.id >> 10;
  END;
  CREATE TRIGGER contact_blocks_update AFTER UPDATE OF id, bot_id, preview, deleted_at ON contacts
  BEGIN
    UPDATE contact_blocks SET n = n - 1
      WHERE OLD.preview = 0 AND OLD.deleted_at IS NULL AND bot_id = OLD.bot_id AND block = OLD.id >> 10;
    INSERT INTO contact_blocks (bot_id, block, n)
      SELECT NEW.bot_id, NEW.id >> 10, 1 WHERE NEW.preview = 0 AND NEW.deleted_at IS NULL
      ON CONFLICT (bot_id, block) DO UPDATE SET n = n + 1;
  END;
  `,
  // 3 (extended methods): the platform account's own balance on owners (minor units of its
  // currency); and every tag name ever used in a bot, in order of first use, registered by a
  // trigger on contact_tags, so that a tag has a stable position in getBotTags (its tag id).
  `
  ALTER TABLE owners ADD COLUMN balance INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE owners ADD COLUMN currency TEXT NOT NULL DEFAULT 'USD';

  CREATE TABLE bot_tags (
    id INTEGER PRIMARY KEY,
    bot_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    UNIQUE (bot_id, name)
  ) STRICT;
  INSERT OR IGNORE INTO bot_tags (bot_id, name)
    SELECT c.bot_id, t.name FROM contact_tags t JOIN contacts c ON c.id = t.contact_id ORDER BY t.rowid;
  CREATE TRIGGER bot_tags_register AFTER INSERT ON contact_tags
  BEGIN
    INSERT OR IGNORE INTO bot_tags (bot_id, name) SELECT bot_id, NEW.name FROM contacts WHERE id = NEW.contact_id;
  END;
  `,
  // 4 (contacts): per bot, whether its listed contacts' created_ts never decreases as id grows
  // (`by_time` = 1; true of contacts made through the API, whose ids and times both grow). Then
  // a date window is one id range, and date-filtered totals and offsets come from contact_blocks
  // too. Kept by triggers: a contact that becomes listed is checked against its listed
  // neighbours by id (two index seeks); removing a contact never breaks the order, so the flag
  // only ever falls to 0 (a conservative 0 is safe: it only means the slower path).
  `
  CREATE TABLE contact_order (
    bot_id INTEGER PRIMARY KEY,
    by_time INTEGER NOT NULL CHECK (by_time IN (0, 1))
  ) STRICT;
  INSERT INTO contact_order (bot_id, by_time)
    SELECT bot_id, min(ok) FROM (
      SELECT bot_id, coalesce(lag(created_ts) OVER (PARTITION BY bot_id ORDER BY id) <= created_ts, 1) AS ok
      FROM contacts WHERE preview = 0 AND deleted_at IS NULL
    ) GROUP BY bot_id;

  CREATE TRIGGER contact_order_insert AFTER INSERT ON contacts
  WHEN NEW.preview = 0 AND NEW.deleted_at IS NULL
  BEGIN
${CONTACT_ORDER_CHECK}
  END;
  CREATE TRIGGER contact_order_update AFTER UPDATE OF id, bot_id, created_ts, preview, deleted_at ON contacts
  WHEN NEW.preview = 0 AND NEW.deleted_at IS NULL
  BEGIN
${CONTACT_ORDER_CHECK}
  END;
  `,
  // 5 (contact accounts): an account id is never given out twice. Without AUTOINCREMENT,
  // SQLite reuses the highest id once its row is deleted, and a client still holding the id of
  // a deleted account would then top up someone else's. A high-water mark, kept by a trigger
  // for every insert (fixtures included), gives the next id instead.
  `
  CREATE TABLE id_watermarks (
    name TEXT PRIMARY KEY,
    max_id INTEGER NOT NULL
  ) STRICT;
  INSERT INTO id_watermarks (name, max_id) SELECT 'contact_accounts', coalesce(max(id), 0) FROM contact_accounts;
  CREATE TRIGGER contact_accounts_watermark AFTER INSERT ON contact_accounts
  BEGIN
    UPDATE id_watermarks SET max_id = max(max_id, NEW.id) WHERE name = 'contact_accounts';
  END;
  `,
  // 6 (search): the contact search index of findContacts, built for the contacts already there.
  SEARCH_SCHEMA,
  // 7 (MCP audit trail): every data-changing tool call of an MCP server over this file, written
  // in the same transaction as the change. Append-only: nothing updates or deletes a row.
  `
  CREATE TABLE mcp_audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    tool TEXT NOT NULL,
    contact_id INTEGER,
    entry TEXT NOT NULL
  ) STRICT;
  CREATE INDEX mcp_audit_contact ON mcp_audit (contact_id, seq);
  CREATE TRIGGER mcp_audit_no_update BEFORE UPDATE ON mcp_audit BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
  CREATE TRIGGER mcp_audit_no_delete BEFORE DELETE ON mcp_audit BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
  `,
  // 8: migration 1's idempotency_keys goes: nothing ever read or wrote it. The MCP server keeps
  // its idempotency keys in a file of its own (src/state/mcp-state.ts), on PostgreSQL in
  // mcp_idempotency_keys.
  `
  DROP TABLE idempotency_keys;
  `,
  // 9 (search): the name index by bot, rebuilt for the contacts already there.
  SEARCH_BY_BOT,
];
