/**
 * findContacts over a remote API, which cannot search: a local copy of the owner's contacts,
 * synced by offset paging of getContacts (limit 1000) through the backend, so the remote
 * client's own pacing and 429 handling apply; one page at a time, never two at once.
 *
 * New contacts land at the end of the list, so a sync continues from the last offset. Each
 * page is asked from one before that offset: if the contact there is not the last one read,
 * contacts before it were deleted and the list moved; the sync steps back a page (or starts the
 * pass again). A full pass runs when the copy was never complete, when it is older than
 * `maxAgeMs`, or when asked (`refresh`); between passes the end of the list is read again at
 * most every `catchUpMs`. A find waits for the sync at most `waitMs`, then answers from what is
 * indexed, saying so; the sync goes on behind it. Contacts in this server's own answers
 * (createOrUpdateContact, getContacts) are kept at once.
 */
import type { ApiResponse } from '../../api/backend.js';
import type { Backend } from '../../api/backend.js';
import {
  IndexRefused,
  refusesOwner,
  type ContactHit,
  type ContactIndex,
  type FindOptions,
  type FindResult,
  type IndexInfo,
} from '../contact-search.js';

/** Where the sync stands. */
export interface MirrorState {
  /** Number of the latest full pass. */
  pass: number;
  /** Contacts of the API's list (in id order) already read in this pass or catch-up. */
  offset: number;
  /** Id of the contact at `offset - 1` when it was read: if it moved, contacts before it were deleted. */
  last_id: number | null;
  /** The API's meta.total at the last page. */
  total: number | null;
  /** When the pass under way started; null when none is. */
  pass_started_at: string | null;
  /** Start of the last full pass that finished: the copy holds every contact that existed then. */
  as_of: string | null;
  /** Last time the end of the list was read. */
  checked_at: string | null;
}

/** A contact as the copy keeps it (ids as text, tags as a list). */
export interface MirrorRow {
  id: number;
  bot_id: number;
  messenger: string;
  name: string;
  phone: string | null;
  email: string | null;
  telegram_id: string | null;
  telegram_username: string | null;
  max_user_id: string | null;
  max_username: string | null;
  vk_user_id: string | null;
  viber_id: string | null;
  tags: string[];
}

/** A contact the copy found: no accounts (they are read live). */
export type MirrorHit = Omit<ContactHit, 'accounts'>;

/** The copy's file: its rows, its search index and its sync state (the CLI passes in `state/contact-mirror.ts`). */
export interface ContactMirrorFile {
  state(): MirrorState;
  beginPass(now: string): void;
  restartPass(): void;
  upsert(rows: MirrorRow[]): void;
  putPage(rows: MirrorRow[], next: { offset: number; lastId: number | null; total: number | null }, now: string): void;
  finishPass(): void;
  find(query: string, botIds: readonly number[] | undefined, limit: number): { hits: MirrorHit[]; total: number; capped: boolean };
  count(): number;
  bots(): Array<{ id: number; contacts: number; messenger: string | null }>;
  close(): void;
}

export interface SyncOptions {
  /** A full pass when the last one is older than this. Default one hour. */
  maxAgeMs?: number;
  /** Read the end of the list again at most this often. Default 10 s. */
  catchUpMs?: number;
  /** Longest a find waits for a sync. Default 20 s. */
  waitMs?: number;
  /** getContacts page size. Default 1000, the API's largest. */
  pageSize?: number;
  now?: () => Date;
}

type Mode = 'pass' | 'continue';

function text(v: unknown): string | null {
  return v === undefined || v === null || v === '' ? null : String(v);
}

/** A contact of the API as the copy keeps it. */
function toRow(c: Record<string, unknown>): MirrorRow {
  return {
    id: c.id as number,
    bot_id: c.bot_id as number,
    messenger: String(c.messenger ?? ''),
    name: String(c.name ?? ''),
    phone: text(c.phone),
    email: text(c.email),
    telegram_id: text(c.telegram_id),
    telegram_username: text(c.telegram_username),
    max_user_id: text(c.max_user_id),
    max_username: text(c.max_username),
    vk_user_id: text(c.vk_user_id),
    viber_id: text(c.viber_id),
    tags: Array.isArray(c.tags) ? c.tags.filter((t): t is string => typeof t === 'string') : [],
  };
}

interface Page {
  rows: Array<Record<string, unknown>>;
  total: number | null;
}

/** One owner's copy and its sync. */
class OwnerIndex {
  private running: Promise<void> | undefined;
  private readonly listeners = new Set<NonNullable<FindOptions['progress']>>();
  private lastError: IndexRefused | Error | undefined;

  constructor(
    readonly mirror: ContactMirrorFile,
    private readonly backend: Backend,
    private readonly o: Required<SyncOptions>,
    private readonly stop: AbortSignal,
  ) {}

  private nowIso(): string {
    return this.o.now().toISOString();
  }

  private age(iso: string | null): number {
    return iso === null ? Infinity : this.o.now().getTime() - Date.parse(iso);
  }

  /** What to run now, if anything. */
  private decide(refresh: boolean): Mode | undefined {
    const st = this.mirror.state();
    if (refresh || (st.pass_started_at === null && (st.as_of === null || this.age(st.as_of) > this.o.maxAgeMs))) return 'pass';
    if (st.pass_started_at !== null || this.age(st.checked_at) > this.o.catchUpMs) return 'continue';
    return undefined;
  }

  private tell(done: number, total: number | undefined, message: string): void {
    for (const fn of this.listeners) fn(done, total, message);
  }

  private async page(offset: number): Promise<Page> {
    const res: ApiResponse = await this.backend.call(
      'getContacts',
      { offset, limit: this.o.pageSize },
      { signal: this.stop, onProgress: (m) => this.tell(offset, undefined, m) },
    );
    if (res.status !== 200) throw new IndexRefused(res.status, res.body, res.headers);
    const body = res.body as { data?: unknown; meta?: { total?: unknown } };
    const rows = Array.isArray(body.data) ? (body.data as Array<Record<string, unknown>>) : [];
    return { rows, total: typeof body.meta?.total === 'number' ? body.meta.total : null };
  }

  /** Read pages from where the sync stands to the end of the list. */
  private async sync(mode: Mode): Promise<void> {
    if (mode === 'pass') this.mirror.beginPass(this.nowIso());
    for (;;) {
      const st = this.mirror.state();
      let from = Math.max(0, st.offset - 1);
      let page = await this.page(from);
      let rows = page.rows;
      if (st.offset > 0) {
        if (rows[0]?.id === st.last_id) rows = rows.slice(1);
        else if (st.pass_started_at === null) {
          // The list moved: contacts before the offset were deleted. Only a full pass drops them.
          this.mirror.beginPass(this.nowIso());
          continue;
        } else {
          // Moved during a pass: step back a page; if even that starts past the last contact
          // read, read the pass again from the start.
          from = Math.max(0, st.offset - this.o.pageSize);
          page = await this.page(from);
          rows = page.rows;
          if (from > 0 && !((rows[0]?.id as number) <= (st.last_id ?? 0))) {
            this.mirror.restartPass();
            continue;
          }
        }
      }
      const offset = from + page.rows.length;
      const lastId = (page.rows.at(-1)?.id as number | undefined) ?? st.last_id;
      this.mirror.putPage(rows.map(toRow), { offset, lastId, total: page.total }, this.nowIso());
      this.tell(offset, page.total ?? undefined, `search index: ${offset}${page.total !== null ? ` of ${page.total}` : ''} contacts`);
      if (page.rows.length < this.o.pageSize) break;
    }
    if (this.mirror.state().pass_started_at !== null) this.mirror.finishPass();
  }

  private start(mode: Mode): void {
    const run: Promise<void> = this.sync(mode)
      .then(
        () => {
          this.lastError = undefined;
        },
        (e: unknown) => {
          this.lastError = e instanceof Error ? e : new Error(String(e));
        },
      )
      .finally(() => {
        if (this.running === run) this.running = undefined;
      });
    this.running = run;
  }

  /**
   * Bring the copy up to date, waiting at most `waitMs`; the sync goes on after that. Answers the
   * API's refusal of the key or its owner (401, 402, 403) when a sync this call started stopped
   * on it: only a sync made for this caller speaks for them (one left running by an earlier
   * request may have lost that request's key, `mcp --http --auth key`).
   */
  async ready(opts: FindOptions): Promise<IndexRefused | undefined> {
    const deadline = this.o.now().getTime() + (opts.wait === false ? 0 : this.o.waitMs);
    let refresh = opts.refresh === true;
    let mine: Promise<void> | undefined;
    if (opts.progress) this.listeners.add(opts.progress);
    try {
      for (;;) {
        if (!this.running) {
          const mode = this.decide(refresh);
          if (mode === undefined) return undefined;
          refresh = false;
          this.start(mode);
          mine = this.running;
        }
        const left = deadline - this.o.now().getTime();
        if (left <= 0 || opts.signal?.aborted) return undefined;
        const current = this.running!;
        let timer: NodeJS.Timeout | undefined;
        const finished = await Promise.race([
          current.then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), left);
            opts.signal?.addEventListener('abort', () => resolve(false), { once: true });
          }),
        ]);
        clearTimeout(timer);
        if (!finished) return undefined;
        if (this.lastError) {
          const e = this.lastError;
          const ownerRefused = e instanceof IndexRefused && refusesOwner(e.status);
          if (current === mine) return ownerRefused ? e : undefined;
          // Another caller's sync met a refusal that may not be this caller's: its own sync tells.
          if (ownerRefused) continue;
          return undefined;
        }
        if (!refresh) return undefined;
      }
    } finally {
      if (opts.progress) this.listeners.delete(opts.progress);
    }
  }

  info(): IndexInfo {
    const st = this.mirror.state();
    const syncing = this.running !== undefined;
    return {
      source: 'remote',
      contacts: this.mirror.count(),
      as_of: st.as_of,
      syncing,
      complete: st.as_of !== null,
      ...(syncing && st.pass_started_at !== null
        ? { progress: `${st.offset}${st.total !== null ? ` of ${st.total}` : ''} contacts read` }
        : {}),
      ...(this.lastError ? { error: this.lastError.message } : {}),
    };
  }

  /** The error that stopped the last sync, when it left nothing to search. */
  refusal(): IndexRefused | undefined {
    return this.lastError instanceof IndexRefused && this.mirror.state().as_of === null && this.mirror.count() === 0
      ? this.lastError
      : undefined;
  }

  async close(): Promise<void> {
    await this.running;
    this.mirror.close();
  }
}

/** findContacts' index over a remote API: one synced copy per owner. */
export class SyncedContactIndex implements ContactIndex {
  private readonly owners = new Map<number, OwnerIndex>();
  private readonly stop = new AbortController();
  private readonly o: Required<SyncOptions>;

  constructor(
    private readonly backend: Backend,
    private readonly open: (ownerId: number) => ContactMirrorFile,
    opts: SyncOptions = {},
  ) {
    this.o = {
      maxAgeMs: opts.maxAgeMs ?? 60 * 60_000,
      catchUpMs: opts.catchUpMs ?? 10_000,
      waitMs: opts.waitMs ?? 20_000,
      pageSize: opts.pageSize ?? 1000,
      now: opts.now ?? (() => new Date()),
    };
  }

  private owner(ownerId: number): OwnerIndex {
    let oi = this.owners.get(ownerId);
    if (!oi) {
      oi = new OwnerIndex(this.open(ownerId), this.backend, this.o, this.stop.signal);
      this.owners.set(ownerId, oi);
    }
    return oi;
  }

  async find(ownerId: number, query: string, opts: FindOptions): Promise<FindResult> {
    const oi = this.owner(ownerId);
    // The API refuses this caller now (a key revoked, a plan ended, an owner blocked): the copy
    // is no longer theirs to read. A sync stopped by anything else (a 429, the service down)
    // leaves the copy searchable, its error said in meta.index.
    const refused = (await oi.ready(opts)) ?? oi.refusal();
    if (refused) throw refused;
    const { hits, total, capped } = oi.mirror.find(query, opts.botIds, opts.limit);
    return { hits, total, capped, index: oi.info() };
  }

  /** Keep contacts this server's own answers showed (a contact it just created or renamed). */
  observe(ownerId: number, contacts: Array<Record<string, unknown>>): void {
    this.owner(ownerId).mirror.upsert(contacts.map(toRow));
  }

  /** Bots in the owner's copy, with contacts and messenger. */
  bots(ownerId: number): Array<{ id: number; contacts: number; messenger: string | null }> {
    return this.owner(ownerId).mirror.bots();
  }

  /** Stop any sync (between pages) and close the files. */
  async close(): Promise<void> {
    this.stop.abort();
    await Promise.all([...this.owners.values()].map((oi) => oi.close()));
    this.owners.clear();
  }
}
