/**
 * Test worlds: a temp SQLite file seeded with a fixture, the real service over real HTTP on
 * 127.0.0.1, and a small client that keeps status, headers, raw text and parsed body.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Server } from 'node:http';
import qs from 'qs';
import { listen } from '../../src/http/server.js';
import { Service } from '../../src/service/pipeline.js';
import { deriveSecrets } from '../../src/service/secrets.js';
import { Store } from '../../src/store/index.js';
import { loadFixture } from '../../src/store/seed.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEMO_FIXTURE = join(ROOT, 'fixtures', 'demo.json');

export function demoFixture(): Record<string, unknown> {
  return JSON.parse(readFileSync(DEMO_FIXTURE, 'utf8')) as Record<string, unknown>;
}

/** A small world every suite can extend: two pro owners, a free one, a blocked one. */
export function baseFixture(): Record<string, unknown> {
  return {
    owners: [
      { id: 1, name: 'Alice', email: 'alice@example.com', plan: 'pro', api_key: 'alice-key' },
      { id: 2, name: 'Bob', email: 'bob@example.com', plan: 'pro', api_key: 'bob-key' },
      { id: 3, name: 'Fran', plan: 'free', api_key: 'fran-key' },
      { id: 4, name: 'Blocked', plan: 'pro', blocked: true, api_key: 'blocked-key' },
    ],
    projects: [
      { uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', owner_id: 1, name: 'Shop' },
      { uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11', owner_id: 2, name: 'Bob shop' },
    ],
    members: [{ owner_id: 1, project_uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11' }],
    bots: [
      { id: 10, project_uuid: '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10', name: 'Shop bot' },
      { id: 20, project_uuid: '5a2b3c4d-1111-4c1e-9a55-0b6f3d2e1a11', name: 'Bob bot' },
    ],
  };
}

/** The base world with Alice's contact 100 (Ann) in bot 10 and her USD account 500 of 10.00. */
export function accountFixture(): Record<string, unknown> {
  return {
    ...baseFixture(),
    contacts: [{ id: 100, bot_id: 10, messenger: 'telegram', name: 'Ann', telegram_id: '5001' }],
    accounts: [{ id: 500, contact_id: 100, currency: 'USD', amount: 1000 }],
  };
}

export interface CallOptions {
  key?: string | null;
  verb?: string;
  /** Send params as form fields (POST) instead of JSON. */
  form?: boolean;
  headers?: Record<string, string>;
  /** Raw body text (overrides params for POST). */
  rawBody?: string;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export class World {
  constructor(
    readonly dir: string,
    readonly dbFile: string,
    readonly store: Store,
    readonly service: Service,
    readonly server: Server,
    readonly baseUrl: string,
  ) {}

  /** Call a method over HTTP as `key` (default alice-key). GET puts params in the query. */
  async call(method: string, params: Record<string, unknown> = {}, o: CallOptions = {}): Promise<CallResult> {
    const verb = o.verb ?? 'POST';
    const headers: Record<string, string> = { Accept: 'application/json', ...o.headers };
    const key = o.key === undefined ? 'alice-key' : o.key;
    if (key !== null) headers.Authorization = `Bearer ${key}`;
    let url = `${this.baseUrl}/${method}`;
    let body: string | undefined;
    if (verb === 'GET' || verb === 'HEAD') {
      const q = qs.stringify(params, { encodeValuesOnly: true });
      if (q) url += `?${q}`;
    } else if (o.rawBody !== undefined) {
      headers['Content-Type'] ??= 'application/json';
      body = o.rawBody;
    } else if (o.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = qs.stringify(params, { encodeValuesOnly: true });
    } else {
      headers['Content-Type'] ??= 'application/json';
      body = JSON.stringify(params);
    }
    const res = await fetch(url, { method: verb, headers, body, redirect: 'manual' });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
    this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'workspace-mcp-test-'));
}

/** Seed `fixture` into a fresh database file and serve it on an ephemeral port. */
export async function startWorld(
  fixture: Record<string, unknown> = baseFixture(),
  opts: { rateLimit?: number; now?: () => Date } = {},
): Promise<World> {
  const dir = tempDir();
  const dbFile = join(dir, 'workspace.db');
  const store = Store.open(dbFile);
  loadFixture(store, fixture);
  const service = new Service(store, {
    rateLimit: opts.rateLimit ?? 0,
    secrets: deriveSecrets(Buffer.alloc(32, 7)),
    now: opts.now,
  });
  const { server, baseUrl } = await listen(service, '127.0.0.1', 0);
  return new World(dir, dbFile, store, service, server, baseUrl);
}

/** A maker of temp dirs for one test file; `removeAll` (in afterAll) removes every one it made. */
export function tempDirs(): { fresh: () => string; removeAll: () => void } {
  const made: string[] = [];
  return {
    fresh: () => {
      const d = tempDir();
      made.push(d);
      return d;
    },
    removeAll: () => {
      for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}
