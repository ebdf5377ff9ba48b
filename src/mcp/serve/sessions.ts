/**
 * The 2025-era sessions of the Streamable HTTP endpoint, bounded: a session with no request
 * for `idleMs` is closed (a client that went away never says so), and at most `max` are open
 * at once (`perOwner` for each owner of `--auth key`), a new one past that refused until one
 * ends or expires. Without these, sessions opened and abandoned grow without end.
 */
import { sessionStarted } from '../../common/telemetry.js';

/** What a session is served by: closing it ends the session (and its server instance). */
interface Closable {
  close(): Promise<void>;
}

export interface SessionBounds {
  /** Most sessions open at once (default 1000). */
  max?: number;
  /** Most sessions open at once of one owner, `--auth key` (default 100). */
  perOwner?: number;
  /** How long a session with no request under way is kept since its last one (default 30 min). */
  idleMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

interface Entry<T> {
  transport: T;
  /** The owner who opened it (`--auth key`); undefined: `--auth token`'s one owner. */
  owner: number | undefined;
  lastUsed: number;
  /** Requests under way, a GET stream among them. */
  busy: number;
  /** Ends its mcp.server.session.duration (telemetry). */
  ended: () => void;
}

export class Sessions<T extends Closable> {
  private readonly byId = new Map<string, Entry<T>>();
  /** Sessions open and initializations under way, of each owner. */
  private readonly counts = new Map<number | undefined, number>();
  private opening = 0;
  private readonly max: number;
  private readonly perOwner: number;
  private readonly idleMs: number;
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    bounds: SessionBounds,
    private readonly onerror: (e: Error) => void,
  ) {
    this.max = bounds.max ?? 1000;
    this.perOwner = bounds.perOwner ?? 100;
    this.idleMs = bounds.idleMs ?? 30 * 60_000;
    this.now = bounds.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(this.now()), Math.min(60_000, Math.max(1000, this.idleMs)));
    this.sweeper.unref();
  }

  /** The session `id` when `owner` opened it and it has not expired; undefined otherwise. */
  get(id: string, owner: number | undefined): T | undefined {
    const e = this.byId.get(id);
    if (!e || e.owner !== owner) return undefined;
    if (this.expired(e, this.now())) {
      this.end(id, e);
      return undefined;
    }
    return e.transport;
  }

  /** Marks a request to session `id` under way until `done` is called (when its response closed). */
  use(id: string): () => void {
    const e = this.byId.get(id);
    if (!e) return () => {};
    e.busy++;
    e.lastUsed = this.now();
    return () => {
      e.busy--;
      e.lastUsed = this.now();
    };
  }

  /**
   * A place for a new session of `owner`: `opened` once it has an id, `done` when its
   * initialize was answered (whether it opened or not); or, at a bound, the seconds after
   * which to try again.
   */
  reserve(owner: number | undefined): { opened(id: string, transport: T): void; done(): void } | { retryAfter: number } {
    const now = this.now();
    if (this.full(owner)) this.sweep(now);
    if (this.full(owner)) return { retryAfter: this.retryAfter(owner, now) };
    this.opening++;
    this.count(owner, 1);
    let open = false;
    let finished = false;
    return {
      opened: (id, transport) => {
        if (finished || open) return;
        open = true;
        this.opening--;
        this.byId.set(id, { transport, owner, lastUsed: this.now(), busy: 0, ended: sessionStarted('tcp') });
      },
      done: () => {
        if (finished) return;
        finished = true;
        // Not opened: its place goes back. Opened: the place is the session's until `delete`.
        if (open) return;
        this.opening--;
        this.count(owner, -1);
      },
    };
  }

  /** Forgets session `id` (closed by its client or here). */
  delete(id: string): void {
    const e = this.byId.get(id);
    if (!e) return;
    this.byId.delete(id);
    this.count(e.owner, -1);
    e.ended();
  }

  /** Closes session `id` now, requests under way or not (the key that opened it stopped working). */
  closeNow(id: string): void {
    const e = this.byId.get(id);
    if (e) this.end(id, e);
  }

  /** Closes every session with no request under way for `idleMs`. */
  private sweep(now: number): void {
    for (const [id, e] of this.byId) if (this.expired(e, now)) this.end(id, e);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.byId.values()];
    this.byId.clear();
    this.counts.clear();
    for (const e of all) {
      e.ended();
      await e.transport.close();
    }
  }

  private expired(e: Entry<T>, now: number): boolean {
    return e.busy === 0 && now - e.lastUsed >= this.idleMs;
  }

  private end(id: string, e: Entry<T>): void {
    this.delete(id);
    e.transport.close().catch(this.onerror);
  }

  private full(owner: number | undefined): boolean {
    const total = this.byId.size + this.opening;
    return total >= this.max || (owner !== undefined && (this.counts.get(owner) ?? 0) >= this.perOwner);
  }

  private count(owner: number | undefined, by: number): void {
    const n = (this.counts.get(owner) ?? 0) + by;
    if (n > 0) this.counts.set(owner, n);
    else this.counts.delete(owner);
  }

  /** Seconds until the first idle session (of `owner`, when it is their bound that is reached) expires; at most idleMs's. */
  private retryAfter(owner: number | undefined, now: number): number {
    const ownerFull = owner !== undefined && (this.counts.get(owner) ?? 0) >= this.perOwner;
    let soonest = this.idleMs;
    for (const e of this.byId.values()) {
      if (e.busy > 0 || (ownerFull && e.owner !== owner)) continue;
      soonest = Math.min(soonest, e.lastUsed + this.idleMs - now);
    }
    return Math.max(1, Math.ceil(soonest / 1000));
  }
}
