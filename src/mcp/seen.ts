/**
 * Ids the MCP server has seen in the API's answers: bots, projects, currencies. A remote API
 * has no "list bots" method, so getWorkspace and completions over a remote backend offer what
 * earlier answers showed.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** At most this many of each kind are kept. */
const KEEP = 1000;

/** The contacts in an answer's `data` (a contact, or a list of them), as the API shapes them. */
export function contactsIn(body: unknown): Array<Record<string, unknown>> {
  const data = body && typeof body === 'object' ? (body as { data?: unknown }).data : undefined;
  const items = Array.isArray(data) ? data : data && typeof data === 'object' ? [data] : [];
  const isContact = (o: unknown): o is Record<string, unknown> =>
    !!o &&
    typeof o === 'object' &&
    Number.isSafeInteger((o as Record<string, unknown>).id) &&
    Number.isSafeInteger((o as Record<string, unknown>).bot_id) &&
    typeof (o as Record<string, unknown>).messenger === 'string' &&
    typeof (o as Record<string, unknown>).name === 'string';
  return items.filter(isContact);
}

export class SeenIds {
  readonly bots = new Set<number>();
  readonly projects = new Set<string>();
  readonly currencies = new Set<string>();

  /** Note the ids in an answer's `data` (an object or a list of them); other keys are not read. */
  record(body: unknown): void {
    const data = body && typeof body === 'object' ? (body as { data?: unknown }).data : undefined;
    const items = Array.isArray(data) ? data : data && typeof data === 'object' ? [data] : [];
    for (const item of items) {
      if (!item || typeof item !== 'object') continue;
      const o = item as Record<string, unknown>;
      if (Number.isSafeInteger(o.bot_id) && this.bots.size < KEEP) this.bots.add(o.bot_id as number);
      for (const k of ['project', 'project_uuid']) {
        const v = o[k];
        if (typeof v === 'string' && UUID.test(v) && this.projects.size < KEEP) this.projects.add(v);
      }
      if (typeof o.currency === 'string' && /^[A-Z]{3}$/.test(o.currency) && this.currencies.size < KEEP) this.currencies.add(o.currency);
    }
  }
}
