// A bare node:http server answering every request with fixed bytes: the baseline for HTTP figures.
import { createServer } from 'node:http';

const body = process.argv[2] ?? '{}';
const headers = JSON.parse(process.argv[3] ?? '{}');
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}/api/v1\n`);
});
