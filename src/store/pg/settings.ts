/** Settings and method deprecations on PostgreSQL (the SQLite part: ../settings.ts). */
import type { Surface } from '../store-api.js';
import type { SettingStore } from '../settings.js';
import type { PgConnection } from './connection.js';

export class PgSettingStore implements Surface<SettingStore> {
  constructor(private readonly c: PgConnection) {}

  get(key: string): string | undefined {
    return this.c.one<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key])?.value;
  }
  set(key: string, value: string): void {
    this.c.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  }
  remove(key: string): void {
    this.c.query('DELETE FROM settings WHERE key = $1', [key]);
  }
  /** Read on every call: a deprecation set through one instance holds on all. */
  deprecation(method: string): { method: string; sunset: string } | undefined {
    return this.c.one<{ method: string; sunset: string }>('SELECT method, sunset FROM deprecations WHERE method = $1', [method]);
  }
  setDeprecation(method: string, sunset: string): void {
    this.c.query('INSERT INTO deprecations (method, sunset) VALUES ($1, $2) ON CONFLICT (method) DO UPDATE SET sunset = excluded.sunset', [
      method,
      sunset,
    ]);
  }
}
