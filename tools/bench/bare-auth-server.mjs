// The baseline of the HTTP reads that touch no rows (getMe, getListSchema): a bare node:http
// server doing the least a correct answer needs: the bearer's SHA-256, the owner looked up by
// that hash in a SQLite file with a prepared statement (401 when none), then the exact bytes ours
// answered. No pipeline (plan, block, rate limit, validation, access checks).
// Usage: node tools/bench/bare-auth-server.mjs DB_FILE BODY_FILE [CONTENT_TYPE]   (prints its base URL)
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { openRaw } from './raw.mjs';

const db = openRaw(process.argv[2]);
const ownerOf = db.prepare('SELECT id FROM owners WHERE key_hash = ?').pluck();
const body = readFileSync(process.argv[3]);
const type = process.argv[4] ?? 'application/json';
const refused = Buffer.from(JSON.stringify({ error: 'unauthorized' }));

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const owner = m ? ownerOf.get(hash('sha256', m[1], 'hex')) : undefined;
    if (owner === undefined) {
      res.writeHead(401, { 'Content-Type': 'application/json', 'Content-Length': refused.length });
      return res.end(refused);
    }
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}/api/v1\n`));
process.once('SIGTERM', () => {
  db.close();
  process.exit(0);
});
