/**
 * Crash and the audit trail: "kill -9 during a stream of top-ups leaves the journal and the
 * audit in exact agreement". Two MCP servers (Streamable HTTP) on one database file take a
 * stream of top-ups from SDK clients and are killed with SIGKILL mid-stream; afterwards every
 * journal record has its audit row with status 200, and every audit row of a success its journal
 * record: the local backend writes both in one transaction.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { cliEnv, spawnAnnounced } from '../helpers/cli.js';
import { accountFixture, seedDb } from '../helpers/world.js';
import { withinBudget } from '../helpers/budget.js';

describe('crash in the middle of a stream of MCP top-ups', () => {
  it('leaves the journal and the audit trail in exact agreement', { timeout: 90_000 }, async () => {
    const db = seedDb(accountFixture(), 'audit-crash.db');
    const servers = await Promise.all(
      [0, 1].map(() =>
        spawnAnnounced(['--db', db, '--http', '--port', '0'], /(http:\/\/\S+\/mcp)/, cliEnv({ WORKSPACE_API_KEY: 'alice-key' })),
      ),
    );
    const clients = await Promise.all(
      servers.map(async (s) => {
        const c = withinBudget(new Client({ name: 'crash', version: '1' }));
        await c.connect(new StreamableHTTPClientTransport(new URL(s.url)));
        return c;
      }),
    );
    const acked: string[] = [];
    let reached: () => void;
    const enough = new Promise<void>((r) => (reached = r));
    let n = 0;
    let stopped = false;
    const worker = async () => {
      while (!stopped) {
        const id = `op-${n++}`;
        try {
          // A call whose server was killed under it must end, not wait out the SDK's 60 s default.
          const r = await clients[n % 2]!.callTool(
            { name: 'addFundsToContactAccount', arguments: { account_id: 500, amount: 1, description: id } },
            undefined,
            { timeout: 5_000 },
          );
          if (!r.isError && acked.push(id) === 40) reached();
        } catch {
          // The server died under this call: not acknowledged.
        }
      }
    };
    const stream = Promise.all(Array.from({ length: 6 }, worker));
    await enough;
    await Promise.all(servers.map((s) => new Promise((r) => s.proc.once('exit', r).kill('SIGKILL'))));
    stopped = true;
    await stream;
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));

    const conn = new Database(db, { readonly: true });
    const journal = (
      conn.prepare('SELECT description FROM account_journal WHERE account_id = 500 AND description LIKE ?').all('op-%') as {
        description: string;
      }[]
    ).map((j) => j.description);
    const audit = (conn.prepare('SELECT entry FROM mcp_audit').all() as { entry: string }[]).map((r) => JSON.parse(r.entry));
    conn.close();
    const audited = audit.filter((e) => e.status === 200).map((e) => e.arguments.description);
    expect(journal.length).toBeGreaterThanOrEqual(40);
    expect([...audited].sort()).toEqual([...journal].sort());
    for (const id of acked) expect(journal).toContain(id);
  });
});
