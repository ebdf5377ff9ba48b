/** A server's first step: its port, taken before anything of its start is made (common/drain.ts, bindFirst). */
import type { Bound } from '../common/drain.js';
import { StartError } from './start-error.js';

/** `bind()`'s server, or the start error that says why it could not listen on `host`:`port` (one line, exit 2). */
export async function takePort(bind: () => Promise<Bound>, host: string, port: number): Promise<Bound> {
  try {
    return await bind();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new StartError(`port ${port} on ${host} is in use: give --port another number (0: any free port)`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      throw new StartError(`--host ${host} is not an address of this machine: give one it has, e.g. 127.0.0.1`);
    throw e;
  }
}
