/**
 * The schema of the MCP server's own state (idempotency keys, the money window, OAuth sign-in,
 * bulk plans, accounts' holders), both of its homes side by side, each numbered and forward-only (never edit a
 * released entry): a SQLite file of its own (`mcp-state.ts`, versioned by `PRAGMA
 * user_version`), or the tables `mcp_*` in the service's PostgreSQL database, which every
 * instance on it shares (`pg/mcp-state.ts`, versioned by the row of `mcp_state_schema`). The
 * audit trail is not here: the service writes it in the change's own transaction, so it is the
 * store's (`store/migrations.ts`, `store/pg/migrations.ts`).
 */
/** Marks a file as this schema (`PRAGMA application_id`), so another SQLite file is refused. */
export const MCP_STATE_APPLICATION_ID = 0x574d4353;

/** Numbered, forward-only migrations of the state file; never edit a released entry. */
export const MCP_STATE_MIGRATIONS: readonly string[] = [
  // 1: idempotency keys. status 0 with an empty body is a reservation: the call is under way,
  // or its outcome was never learnt.
  `
  PRAGMA application_id = ${MCP_STATE_APPLICATION_ID};
  CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    method TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope, key)
  ) STRICT;
  `,
  // 2: money moved (or being moved) through the MCP server, per account, for the rolling 24 h
  // caps. A reservation is written before the call and dropped when the call moved nothing.
  `
  CREATE TABLE money_moves (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    account_id INTEGER NOT NULL,
    amount INTEGER NOT NULL,
    at_ms INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX money_moves_window ON money_moves (scope, account_id, at_ms);
  `,
  // 3: OAuth sign-in (`--auth oauth`, src/oauth/): registered clients, grants holding a
  // person's API key sealed, and codes and tokens kept only as their SHA-256.
  `
  CREATE TABLE oauth_clients (
    client_id TEXT PRIMARY KEY,
    metadata TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX oauth_clients_created ON oauth_clients (created_at);
  CREATE TABLE oauth_grants (
    id TEXT PRIMARY KEY,
    owner_id INTEGER NOT NULL,
    client_id TEXT NOT NULL,
    client_name TEXT NOT NULL,
    resource TEXT NOT NULL,
    scope TEXT NOT NULL,
    sealed_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT,
    revoked_why TEXT
  ) STRICT;
  CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    challenge TEXT NOT NULL,
    resource TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    used INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE oauth_tokens (
    token_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    used INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_ms);
  `,
  // 4: bulk plans (previewBulk, runBulk; state/bulk-plans.ts): a plan's body, its confirmation,
  // who holds its run until when, and one step per contact with its status and note.
  `
  CREATE TABLE bulk_plans (
    scope TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    confirmation TEXT,
    runner TEXT,
    held_until_ms INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, id)
  ) STRICT;
  CREATE TABLE bulk_steps (
    scope TEXT NOT NULL,
    plan_id TEXT NOT NULL,
    contact_id INTEGER NOT NULL,
    status TEXT NOT NULL,
    note TEXT NOT NULL,
    PRIMARY KEY (scope, plan_id, contact_id)
  ) STRICT;
  `,
  // 5: an access token's own scope, when the refresh that made it asked for less than its grant
  // holds (NULL: the grant's, as every token made before). A grant's scope was kept from the
  // start: grants made before scopes hold \`workspace\`, all four.
  `
  ALTER TABLE oauth_tokens ADD COLUMN scope TEXT;
  `,
  // 6: which contact holds which account, as the API's answers showed it to a scope (only the
  // two ids; mcp/state.ts AccountHolders): a money call in one process finds an account a read
  // in another showed, and reads it live before the caps.
  `
  CREATE TABLE account_holders (
    scope TEXT NOT NULL,
    account_id INTEGER NOT NULL,
    contact_id INTEGER NOT NULL,
    PRIMARY KEY (scope, account_id)
  ) STRICT, WITHOUT ROWID;
  `,
];

/**
 * The PostgreSQL twins of `MCP_STATE_MIGRATIONS`, entry for entry, in the service's own database
 * (SQLite's types and text compared byte by byte, as the store's tables: `store/pg/migrations.ts`).
 * A database migrated by a version before these had its own (the store's migrations 2, 4 and 5,
 * now empty) has these tables already: so 1 to 4 make each table and index only if it is not
 * there. What comes after them needs no such care: every database passes through them first.
 */
export const PG_STATE_MIGRATIONS: readonly string[] = [
  // 1: idempotency keys (status 0 with an empty body is a reservation).
  `
  CREATE TABLE IF NOT EXISTS mcp_idempotency_keys (
    scope text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    method text COLLATE "C" NOT NULL,
    params_hash text COLLATE "C" NOT NULL,
    status integer NOT NULL,
    body text COLLATE "C" NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    PRIMARY KEY (scope, key)
  );
  `,
  // 2: money moved through the MCP server per account, for the rolling 24 h caps.
  `
  CREATE TABLE IF NOT EXISTS mcp_money_moves (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope text COLLATE "C" NOT NULL,
    account_id bigint NOT NULL,
    amount bigint NOT NULL,
    at_ms bigint NOT NULL
  );
  CREATE INDEX IF NOT EXISTS mcp_money_moves_window ON mcp_money_moves (scope, account_id, at_ms);
  `,
  // 3: OAuth sign-in (pg/oauth-store.ts).
  `
  CREATE TABLE IF NOT EXISTS mcp_oauth_clients (
    client_id text COLLATE "C" PRIMARY KEY,
    metadata text NOT NULL,
    created_at text COLLATE "C" NOT NULL
  );
  CREATE INDEX IF NOT EXISTS mcp_oauth_clients_created ON mcp_oauth_clients (created_at);
  CREATE TABLE IF NOT EXISTS mcp_oauth_grants (
    id text COLLATE "C" PRIMARY KEY,
    owner_id bigint NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    client_name text NOT NULL,
    resource text COLLATE "C" NOT NULL,
    scope text COLLATE "C" NOT NULL,
    sealed_key text COLLATE "C" NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    last_used_at text COLLATE "C",
    revoked_at text COLLATE "C",
    revoked_why text
  );
  CREATE TABLE IF NOT EXISTS mcp_oauth_codes (
    code_hash text COLLATE "C" PRIMARY KEY,
    grant_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    redirect_uri text COLLATE "C" NOT NULL,
    challenge text COLLATE "C" NOT NULL,
    resource text COLLATE "C" NOT NULL,
    expires_ms bigint NOT NULL,
    used smallint NOT NULL
  );
  CREATE TABLE IF NOT EXISTS mcp_oauth_tokens (
    token_hash text COLLATE "C" PRIMARY KEY,
    grant_id text COLLATE "C" NOT NULL,
    kind text COLLATE "C" NOT NULL,
    expires_ms bigint NOT NULL,
    used smallint NOT NULL
  );
  CREATE INDEX IF NOT EXISTS mcp_oauth_tokens_expiry ON mcp_oauth_tokens (expires_ms);
  `,
  // 4: bulk plans (pg/bulk-plans.ts).
  `
  CREATE TABLE IF NOT EXISTS mcp_bulk_plans (
    scope text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    body text NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    expires_at text COLLATE "C" NOT NULL,
    confirmation text,
    runner text COLLATE "C",
    held_until_ms bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, id)
  );
  CREATE TABLE IF NOT EXISTS mcp_bulk_steps (
    scope text COLLATE "C" NOT NULL,
    plan_id text COLLATE "C" NOT NULL,
    contact_id bigint NOT NULL,
    status text COLLATE "C" NOT NULL,
    note text NOT NULL,
    PRIMARY KEY (scope, plan_id, contact_id)
  );
  `,
  // 5: an access token's own scope (NULL: its grant's).
  `
  ALTER TABLE mcp_oauth_tokens ADD COLUMN scope text COLLATE "C";
  `,
  // 6: which contact holds which account, as answers showed it to a scope (only the two ids).
  `
  CREATE TABLE mcp_account_holders (
    scope text COLLATE "C" NOT NULL,
    account_id bigint NOT NULL,
    contact_id bigint NOT NULL,
    PRIMARY KEY (scope, account_id)
  );
  `,
];
