/**
 * What serves each party of the MCP endpoint over HTTP — the one owner of `--auth token`, or
 * each owner of `--auth key` and `--auth oauth` — and, for the latter, the parties kept: made
 * when an owner's first request comes, let go when unused for long, over the bound, or when the
 * owner's key changed (regenerated), with the 2025-era sessions they opened.
 */
import type { ServerResponse } from 'node:http';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { narrow, type Reach } from '../auth/scopes.js';
import type { McpContext } from '../context.js';
import type { ToolSpec } from '../tool-spec.js';
import { mcpServerFactory, type McpServerFactory } from './server.js';

/** What serves one reach of a party (auth/scopes.ts): its instances and 2026-07-28 handler. */
interface Served {
  factory: McpServerFactory;
  modernNode: ReturnType<typeof toNodeHandler>;
}

/** One party: what serves each reach of it, made when first asked for. */
export interface Party {
  reaching(reach: Reach): Served;
  close(): Promise<void>;
}

/** The party over `ctx` and `tools`; `closeServed` runs when it is closed (the owner's own search, remote). */
export function partyOver(ctx: McpContext, tools: ToolSpec[], onerror: (e: Error) => void, closeServed?: () => Promise<void>): Party {
  const reaches = new Map<string, Served & { modern: ReturnType<typeof createMcpHandler> }>();
  const unsubscribe = ctx.onListsChanged(() => {
    for (const r of reaches.values()) r.modern.notify.resourcesChanged();
  });
  return {
    reaching(reach) {
      let r = reaches.get(reach.key);
      if (!r) {
        const { served, withheld } = narrow(tools, reach);
        const factory = mcpServerFactory(ctx, served, { withheld, reach });
        // 2026-07-28: one instance a request; list changes reach open subscriptions/listen streams
        // through the handler's bus. 2025-era requests never get here ('reject'): see http.ts' `legacy`.
        const modern = createMcpHandler((rc) => factory(rc, { pushListChanged: false }), { legacy: 'reject', onerror });
        r = { factory, modern, modernNode: toNodeHandler(modern, { onerror }) };
        reaches.set(reach.key, r);
      }
      return r;
    },
    async close() {
      unsubscribe();
      for (const r of reaches.values()) await r.modern.close();
      await closeServed?.();
    },
  };
}

/** An owner's party as kept: when last used, their requests under way and open 2025-era sessions (kept while any is). */
export interface Kept {
  party: Promise<Party>;
  /** The hash of the key the party acts by, if it acts by one. */
  keyHash?: string;
  /** The owner's key changed: the party is let go, and a request that reached it before is refused. */
  retired?: boolean;
  lastUsed: number;
  busy: number;
  sessions: Set<string>;
}

/** What serves an owner: their context and tools (acting by the key with `keyHash`), made when first needed; `close` when no longer kept. */
export type ServeOwner = (ownerId: number, keyHash?: string) => Promise<{ ctx: McpContext; tools: ToolSpec[]; close?(): Promise<void> }>;

/** The parties of `--auth key` and `--auth oauth`, one an owner. */
export class Parties {
  private readonly kept = new Map<number, Kept>();
  private readonly sweeper: NodeJS.Timeout;

  /** `maxOwners`: most kept at once; `idleMs`: how long an owner without a session or a request under way is kept unused. */
  constructor(
    private readonly serve: ServeOwner,
    private readonly sessions: { closeNow(id: string): void },
    private readonly onerror: (e: Error) => void,
    private readonly maxOwners: number,
    private readonly idleMs: number,
  ) {
    this.sweeper = setInterval(() => this.sweep(Date.now()), 60_000);
    this.sweeper.unref();
  }

  /**
   * Drops owners unused for idleMs, and over the bound (with `room` places wanted for new ones)
   * the least recently used; never one with an open session or a request under way.
   */
  private sweep(now: number, room = 0): void {
    const idle = [...this.kept].filter(([, k]) => k.sessions.size === 0 && k.busy === 0).sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    let over = this.kept.size + room - this.maxOwners;
    for (const [owner, k] of idle) {
      if (now - k.lastUsed < this.idleMs && over <= 0) break;
      this.letGo(owner, k);
      over--;
    }
  }

  /** An owner's party no longer kept, closed once made. */
  private letGo(owner: number, k: Kept): void {
    this.kept.delete(owner);
    void k.party.then((p) => p.close()).catch(this.onerror);
  }

  /**
   * The party of `who` as kept, made when first needed, busy until `res` closed; undefined when
   * the bound is reached by owners with open sessions or requests under way.
   */
  of(who: { id: number; keyHash?: string }, res: ServerResponse): Kept | undefined {
    const now = Date.now();
    const owner = who.id;
    let k = this.kept.get(owner);
    if (k && k.keyHash !== who.keyHash) {
      // The owner's key changed (regenerated): the party of the old key goes now, with the
      // sessions it opened; work still under way on it is refused at its next call.
      k.retired = true;
      for (const id of k.sessions) this.sessions.closeNow(id);
      this.letGo(owner, k);
      k = undefined;
    }
    if (!k) {
      if (this.kept.size >= this.maxOwners) this.sweep(now, 1);
      if (this.kept.size >= this.maxOwners) return undefined;
      const party = this.serve(owner, who.keyHash).then(({ ctx, tools, close }) => partyOver(ctx, tools, this.onerror, close));
      const made: Kept = { party, keyHash: who.keyHash, lastUsed: now, busy: 0, sessions: new Set() };
      // A failure is not kept: the next request tries again.
      party.catch(() => {
        if (this.kept.get(owner) === made) this.kept.delete(owner);
      });
      this.kept.set(owner, made);
      k = made;
    }
    k.lastUsed = now;
    const busy = k;
    busy.busy++;
    res.once('close', () => {
      busy.busy--;
      busy.lastUsed = Date.now();
    });
    return k;
  }

  /** Every party closed (the server is closing). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    for (const k of this.kept.values()) await (await k.party.catch(() => undefined))?.close();
    this.kept.clear();
  }
}
