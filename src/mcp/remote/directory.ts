/**
 * getWorkspace over a remote API, which has getMe but no method that lists projects or bots:
 * the owner from getMe; projects and bots from the configuration (`--project`, `--bot`), from
 * the first page of the owner's lists (each names its project and bot), from earlier answers
 * and from the search index; each bot's contact count read live. Names the API never gives
 * are null, and `notes` says so.
 */
import type { Backend } from '../../api/backend.js';
import type { MethodName } from '../../api/catalog.js';
import type { WorkspaceDirectory, WorkspaceView } from '../state.js';
import type { SyncedContactIndex } from './contact-index.js';
import { IndexRefused } from '../contact-search.js';
import type { SeenIds } from '../seen.js';

export interface RemoteConfig {
  /** `--bot` / $WORKSPACE_BOT_ID. */
  botId?: number;
  /** `--project` / $WORKSPACE_PROJECT_UUID. */
  projectUuid?: string;
  /** Ids seen in answers (shared with the Workspace). */
  seen: SeenIds;
}

/** At most this many bots get a live count. */
const MAX_BOTS = 20;

export class RemoteDirectory implements WorkspaceDirectory {
  constructor(
    private readonly backend: Backend,
    private readonly index: SyncedContactIndex,
    private readonly config: RemoteConfig,
  ) {}

  private async read(method: MethodName, params: Record<string, unknown>): Promise<unknown> {
    const res = await this.backend.call(method, params);
    if (res.status !== 200) throw new IndexRefused(res.status, res.body, res.headers);
    this.config.seen.record(res.body);
    return res.body;
  }

  async describe(ownerId: number): Promise<Omit<WorkspaceView, 'default_bot_id'>> {
    // getMe gives the owner's name and email; past its sunset (410) the owner is known by id only.
    const meRes = await this.backend.call('getMe', {});
    if (meRes.status !== 200 && meRes.status !== 410) throw new IndexRefused(meRes.status, meRes.body, meRes.headers);
    const me = meRes.status === 200 ? (meRes.body as { data: { id?: number; name?: string; email?: string | null } }).data : {};
    const lists =
      ((await this.read('getListSchemas', { page: 1 })) as { data?: Array<{ bot_id?: number | null; project?: string }> }).data ?? [];
    const projectOf = new Map<number, string>();
    for (const l of lists) if (typeof l.bot_id === 'number' && typeof l.project === 'string') projectOf.set(l.bot_id, l.project);
    const indexed = new Map(this.index.bots(ownerId).map((b) => [b.id, b]));
    const projects = new Set([...(this.config.projectUuid ? [this.config.projectUuid] : []), ...this.config.seen.projects]);
    const botIds = this.knownBots(ownerId);
    const bots: WorkspaceView['bots'] = [];
    for (const id of botIds.slice(0, MAX_BOTS)) {
      const count = await this.backend.call('getNumberOfContacts', { bot_id: id });
      const contacts = count.status === 200 ? ((count.body as { count?: number }).count ?? null) : null;
      bots.push({ id, name: null, messenger: indexed.get(id)?.messenger ?? null, project_uuid: projectOf.get(id) ?? null, contacts });
    }
    const notes = [
      'Remote API: it has no method that lists projects or bots, so these are the ones configured (--bot, --project), ' +
        'seen in answers (lists, contacts) or in the search index; names are unknown (null), and a bot with no contacts ' +
        'and no list may be missing.',
    ];
    if (botIds.length > MAX_BOTS) notes.push(`Only the first ${MAX_BOTS} of ${botIds.length} known bots are listed.`);
    return {
      // The API answers Pro keys only (402 otherwise), so a key that got this far is on Pro.
      owner: { id: me.id ?? ownerId, name: me.name ?? null, email: me.email ?? null, plan: 'pro' },
      projects: [...projects].map((uuid) => ({ uuid, name: null, role: 'owner' as const })),
      bots,
      notes,
    };
  }

  /** Bots configured, seen in answers or in the search index. */
  private knownBots(ownerId: number): number[] {
    const configured = this.config.botId !== undefined ? [this.config.botId] : [];
    return [...new Set([...configured, ...this.config.seen.bots, ...this.index.bots(ownerId).map((b) => b.id)])];
  }

  async botChoices(ownerId: number): Promise<Array<{ id: number; name: string | null }>> {
    return this.knownBots(ownerId).map((id) => ({ id, name: null }));
  }

  async onlyBot(): Promise<number | undefined> {
    return undefined;
  }

  async currencies(): Promise<string[]> {
    return [...this.config.seen.currencies];
  }
}
