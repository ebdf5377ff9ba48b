/** The instance's settings (key → value) and its method deprecations (method → sunset). */
import type { Db } from './db.js';

/** Settings key of the owner a new database was given (the MCP server's owner with no key). */
export const DEFAULT_OWNER_SETTING = 'default_owner_id';

export interface DeprecationRow {
  method: string;
  sunset: string;
}

/** Where the deprecations are kept between requests (core-cache.ts): the whole table, or `loadOne`. */
export interface DeprecationCache {
  deprecation(
    method: string,
    loadAll: () => Array<[string, DeprecationRow]>,
    loadOne: () => DeprecationRow | undefined,
  ): DeprecationRow | undefined;
}

export class SettingStore {
  private readonly s;
  constructor(
    db: Db,
    private readonly cache: DeprecationCache,
  ) {
    this.s = {
      get: db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
      set: db.prepare<[string, string]>(
        'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      ),
      remove: db.prepare<[string]>('DELETE FROM settings WHERE key = ?'),
      deprecation: db.prepare<[string], DeprecationRow>('SELECT method, sunset FROM deprecations WHERE method = ?'),
      deprecations: db.prepare<[], DeprecationRow>('SELECT method, sunset FROM deprecations'),
      setDeprecation: db.prepare<[string, string]>(
        'INSERT INTO deprecations (method, sunset) VALUES (?, ?) ON CONFLICT(method) DO UPDATE SET sunset = excluded.sunset',
      ),
    };
  }

  get(key: string): string | undefined {
    return this.s.get.get(key)?.value;
  }
  set(key: string, value: string): void {
    this.s.set.run(key, value);
  }
  remove(key: string): void {
    this.s.remove.run(key);
  }
  /** The sunset of a deprecated method (by the name it is called), if it is deprecated. */
  deprecation(method: string): DeprecationRow | undefined {
    return this.cache.deprecation(
      method,
      () => this.s.deprecations.all().map((row) => [row.method, row]),
      () => this.s.deprecation.get(method),
    );
  }
  /** Deprecate a method: it answers with Deprecation and Sunset headers, then 410 after `sunset`. */
  setDeprecation(method: string, sunset: string): void {
    this.s.setDeprecation.run(method, sunset);
  }
}
