/**
 * The service's own secret: from `$WORKSPACE_SECRET` (64 hex characters), else a file beside
 * the database made once with owner-only permissions. Encryption and signing keys derive from
 * it. A database keeps a value sealed with it (a setting), so that a start with another secret
 * (a database moved without its `.secret`) is refused instead of failing on encrypted lists.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import type { Secrets } from './context.js';

/** A key of its own for each purpose (the label), from the one master secret. */
const derive = (master: Buffer, info: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32));

export function deriveSecrets(master: Buffer): Secrets {
  return { encryptionKey: derive(master, 'workspace-mcp list field encryption'), signingKey: derive(master, 'workspace-mcp link signing') };
}

/**
 * The key the MCP server seals its questions' request state with (elicit.ts), the same on every
 * instance that shares the secret: a confirmation asked by one is answered through any other.
 */
export function questionKey(master: Buffer): Buffer {
  return derive(master, 'workspace-mcp MCP question sealing');
}

const MASTER = /^[0-9a-fA-F]{64}$/;

/** Where a database's secret comes from, found without writing anything. */
export type SecretSource =
  | { kind: 'env'; master: Buffer }
  | { kind: 'file'; file: string; master: Buffer }
  /** No file yet: a fresh secret, written by `saveSecret` once the database accepts it. */
  | { kind: 'new'; file: string; master: Buffer }
  | { kind: 'memory'; master: Buffer };

export class SecretError extends Error {}

export function secretFileOf(dbFile: string): string {
  return `${dbFile}.secret`;
}

/** Check `$WORKSPACE_SECRET`'s form (when set); throws SecretError. */
export function envSecret(): Buffer | undefined {
  const env = process.env.WORKSPACE_SECRET;
  if (!env) return undefined;
  if (!MASTER.test(env))
    throw new SecretError(
      'WORKSPACE_SECRET must be 64 hexadecimal characters (32 bytes), e.g. from "openssl rand -hex 32"; or unset it to keep the secret in a file beside the database',
    );
  return Buffer.from(env, 'hex');
}

/** The secret for the database at `dbFile`; throws SecretError for a malformed one. */
export function findSecret(dbFile: string): SecretSource {
  const env = envSecret();
  if (env) return { kind: 'env', master: env };
  if (dbFile === ':memory:') return { kind: 'memory', master: randomBytes(32) };
  const file = secretFileOf(dbFile);
  if (!existsSync(file)) return { kind: 'new', file, master: randomBytes(32) };
  const text = readFileSync(file, 'utf8').trim();
  if (!MASTER.test(text))
    throw new SecretError(
      `the secret file ${file} does not hold 64 hexadecimal characters: restore it from a backup, or set WORKSPACE_SECRET`,
    );
  return { kind: 'file', file, master: Buffer.from(text, 'hex') };
}

/**
 * Write a new secret file with owner-only permissions. Written whole to a private name, then
 * linked into place: linking is atomic and fails if another process got there first (then
 * theirs is used, and returned). Returns the master secret the file holds.
 */
export function saveSecret(source: SecretSource & { kind: 'new' }): Buffer {
  const tmp = `${source.file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, source.master.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  try {
    linkSync(tmp, source.file);
    return source.master;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    try {
      chmodSync(source.file, 0o600);
    } catch {
      // Not every file system keeps modes (Windows); the file is still the user's own.
    }
    return Buffer.from(readFileSync(source.file, 'utf8').trim(), 'hex');
  } finally {
    unlinkSync(tmp);
  }
}

// ---------------------------------------------------------------------------------------
// Encryption at rest: "v1:" + base64(iv 12 | tag 16 | ciphertext of the JSON value), the
// record ID and slug bound as associated data so a value cannot be moved to another cell.

export function sealValue(key: Buffer, recordId: string, slug: string, value: unknown): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(`${recordId}\u0000${slug}`));
  const ct = Buffer.concat([c.update(JSON.stringify(value), 'utf8'), c.final()]);
  return 'v1:' + Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64');
}

/** The value sealed in `stored`; throws when this key did not seal it. Other values pass as they are. */
export function openValue(key: Buffer, recordId: string, slug: string, stored: unknown): unknown {
  if (typeof stored !== 'string' || !stored.startsWith('v1:')) return stored;
  const raw = Buffer.from(stored.slice(3), 'base64');
  const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  d.setAAD(Buffer.from(`${recordId}\u0000${slug}`));
  d.setAuthTag(raw.subarray(12, 28));
  const text = Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  return JSON.parse(text) as unknown;
}

/** Settings key of the value sealed with the database's secret. */
export const SECRET_CHECK_SETTING = 'secret_check';
const CHECK = ['settings', SECRET_CHECK_SETTING, 'workspace-mcp'] as const;

export function sealCheck(secrets: Secrets): string {
  return sealValue(secrets.encryptionKey, CHECK[0], CHECK[1], CHECK[2]);
}

/** Whether `secrets` open a stored value (the check value, or an encrypted field's). */
export function opens(
  secrets: Secrets,
  stored: string,
  where: { recordId: string; slug: string } = { recordId: CHECK[0], slug: CHECK[1] },
): boolean {
  try {
    openValue(secrets.encryptionKey, where.recordId, where.slug, stored);
    return true;
  } catch {
    return false;
  }
}
