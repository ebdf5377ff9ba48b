/**
 * The service's own secret: from `$WORKSPACE_SECRET` (64 hex characters), else a file beside
 * the database made once with owner-only permissions. Encryption and signing keys derive from it.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import type { Secrets } from './context.js';

export function deriveSecrets(master: Buffer): Secrets {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));
  return { encryptionKey: derive('workspace-mcp list field encryption'), signingKey: derive('workspace-mcp link signing') };
}

/** The secrets for the database at `dbFile` (an in-memory database gets fresh ones). */
export function loadSecrets(dbFile: string): Secrets {
  const env = process.env.WORKSPACE_SECRET;
  if (env) {
    if (!/^[0-9a-fA-F]{64}$/.test(env)) throw new Error('WORKSPACE_SECRET must be 64 hexadecimal characters');
    return deriveSecrets(Buffer.from(env, 'hex'));
  }
  if (dbFile === ':memory:') return deriveSecrets(randomBytes(32));
  const file = `${dbFile}.secret`;
  if (!existsSync(file)) {
    // Written whole to a private name, then linked into place: linking is atomic and fails
    // if another process starting on the same database got there first (then theirs is used).
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    try {
      linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      unlinkSync(tmp);
    }
  }
  try {
    chmodSync(file, 0o600);
  } catch {
    // Not every file system keeps modes (Windows); the file is still the user's own.
  }
  return deriveSecrets(Buffer.from(readFileSync(file, 'utf8').trim(), 'hex'));
}
