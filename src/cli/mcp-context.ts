/**
 * The MCP server's call contexts, made by one builder (`contextFor`): the server's one context
 * (`servingOver`: stdio, or HTTP with one token), or each person's (`personServed`: `--auth key`
 * and `--auth oauth`), which differ only in who they act as and with what (`Acting`).
 */
import { join } from 'node:path';
import type { McpContext, McpContextOptions } from '../mcp/context.js';
import type { MoneyPolicy } from '../mcp/money/caps.js';
import type { SeenIds } from '../mcp/seen.js';
import type { Callers } from '../mcp/serve/http.js';
import type { Wiring } from '../mcp/serve/instance.js';
import type { ToolFilter } from '../mcp/serve/tool-filter.js';
import type { ToolSpec } from '../mcp/tool-spec.js';
import type { McpState } from '../state/mcp-state.js';
import type { BackendSetup, Keyed } from './mcp-backend.js';

/** The call context and the tools over the wired backend, and how an instance is wired to them. */
interface ContextAndTools {
  ctx: McpContext;
  tools: ToolSpec[];
  wiringOf: (ctx: McpContext, tools: ToolSpec[]) => Wiring;
}

/** What every call gets beside the backend: the caps, the default bot, the ids seen, the result budget, the tool filter. */
export interface ServeOptions {
  policy: MoneyPolicy;
  defaultBotId: number | undefined;
  seen: SeenIds;
  maxResultChars: number;
  filter: ToolFilter;
  ui: boolean;
  /** Served over HTTP: answers name no path of this machine. */
  http: boolean;
}

/** Who one context acts as, and with what: all that differs between a server's one context and each person's (`--auth key`). */
type Acting = Pick<
  McpContextOptions,
  'backend' | 'dataDir' | 'ownerId' | 'contacts' | 'directory' | 'seen' | 'defaultBotId' | 'startNote' | 'localPaths' | 'tasks'
>;

/**
 * A context and its tools over the wired backend (the MCP layer's code loaded on the first
 * call): the idempotency keys, money window and bulk plans of `scope`, and what `acting` takes
 * of the wired backend; the rest is the server's.
 */
async function contextFor(
  setup: BackendSetup,
  state: McpState,
  o: ServeOptions,
  scope: string,
  acting: (wired: Awaited<ReturnType<BackendSetup['wire']>>) => Acting,
): Promise<ContextAndTools> {
  const [wired, { McpContext }, { selectTools, wiringOf }, { ownersAudit }] = await Promise.all([
    setup.wire(),
    import('../mcp/context.js'),
    import('../mcp/serve/server.js'),
    import('../mcp/money/audit.js'),
  ]);
  const who = acting(wired);
  const ctx = new McpContext({
    ...who,
    keys: state.keys(scope),
    // The trail is the database's (or the data folder's), which other owners' servers write
    // too: a context shows its owner's entries only (a server's own entries name no owner when
    // the owner is unknown, a remote getMe switched off).
    audit: ownersAudit(wired.audit, who.ownerId ?? null),
    accountHolder: wired.accountHolder,
    holders: state.holders(scope),
    questionKey: setup.shared?.questionKey,
    money: { policy: o.policy, window: state.moves(scope) },
    plans: state.plans(scope),
    maxResultChars: o.maxResultChars,
    ui: o.ui,
  });
  return { ctx, tools: selectTools(ctx, o.filter), wiringOf };
}

/** Makes the server's one context and its tools over the wired backend when first called. */
export function servingOver(setup: BackendSetup, state: McpState, o: ServeOptions): () => Promise<ContextAndTools> {
  return () =>
    contextFor(setup, state, o, setup.scope, (wired) => ({
      backend: wired.backend,
      dataDir: setup.dataDir,
      ownerId: setup.ownerId,
      contacts: wired.contacts,
      directory: wired.directory,
      defaultBotId: o.defaultBotId,
      startNote: setup.startNote,
      seen: o.seen,
      localPaths: !o.http,
    }));
}

/**
 * `--auth key`: a person's context and tools, made when their first request comes: their
 * idempotency keys, money window, exports folder, audit trail, ids seen, default bot (their only
 * bot: a configured one is refused at start) and, remote, search index.
 */
export function personServed(setup: BackendSetup, state: McpState, keyed: Keyed, o: ServeOptions): Callers['served'] {
  return async (ownerId, keyHash) => {
    let search: ReturnType<NonNullable<Keyed['searchOf']>> | undefined;
    const { ctx, tools } = await contextFor(setup, state, o, keyed.scopeOf(ownerId), (wired) => {
      // Remote: the owner's own search index; local: a backend, search and directory acting by
      // the owner's key (no key: the shared backend, which acts as no one).
      search = keyed.searchOf?.(ownerId);
      const own = keyHash === undefined ? undefined : wired.ownedBy?.(keyHash);
      return {
        backend: own?.backend ?? wired.backend,
        dataDir: join(setup.dataDir, 'owners', String(ownerId)),
        ownerId,
        contacts: search?.contacts ?? own?.contacts ?? wired.contacts,
        directory: search?.directory ?? own?.directory ?? wired.directory,
        seen: search?.seen,
        // No start note: it names the server's database file, which is not theirs to see.
        localPaths: false,
        tasks: false,
      };
    });
    return { ctx, tools, close: search?.close };
  };
}
