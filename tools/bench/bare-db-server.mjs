// The baseline of the HTTP figures that touch the database: a bare node:http server on
// better-sqlite3 with no pipeline (no key, plan, validation, access checks): it parses the
// request the plain way and runs the same SQL a hand-written server would (raw.mjs).
//   POST …/withdrawFundsFromContactAccount  JSON {account_id, amount, description}: the debit
//   GET  …/getContacts?bot_id=B&limit=N[&offset=O]: a page of contacts with tags and variables
// Usage: node tools/bench/bare-db-server.mjs DB_FILE   (prints its base URL on stdout)
import { createServer } from 'node:http';
import { accountView, openRaw, rawContactsPage, rawDebit } from './raw.mjs';

const db = openRaw(process.argv[2]);
const debit = rawDebit(db);
const page = rawContactsPage(db);

function send(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  if (req.method === 'GET' && url.pathname.endsWith('/getContacts')) {
    const q = url.searchParams;
    return send(res, 200, page(Number(q.get('bot_id')), Number(q.get('offset') ?? 0), Number(q.get('limit') ?? 100)));
  }
  if (req.method === 'POST' && url.pathname.endsWith('/withdrawFundsFromContactAccount')) {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const p = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const row = debit(p.account_id, p.amount, p.description);
      if (!row) return send(res, 422, { message: 'Insufficient funds' });
      send(res, 200, { data: accountView(row) });
    });
    return;
  }
  send(res, 404, { message: 'not found' });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}/api/v1\n`));
process.once('SIGTERM', () => {
  db.close();
  process.exit(0);
});
