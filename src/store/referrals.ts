/**
 * Referrals: who referred a contact (`referrer_id`), and the contacts it referred, optionally
 * only those with one of some tags: the SQL. Referrals listed are live, non-preview contacts.
 */
import type { Db } from './db.js';
import type { Messenger } from './contacts.js';

export interface ReferralRow {
  id: number;
  bot_id: number;
  name: string;
  messenger: Messenger;
  created_at: string;
  referrer_id: number | null;
  deleted_at: string | null;
}

const COLUMNS = 'c.id, c.bot_id, c.name, c.messenger, c.created_at, c.referrer_id, c.deleted_at';
// @tags is null (no tag filter) or a JSON array of tag names, any of which qualifies.
const REFERRALS = `FROM contacts c WHERE c.referrer_id = @referrer AND c.deleted_at IS NULL AND c.preview = 0
  AND (@tags IS NULL OR EXISTS (SELECT 1 FROM contact_tags t WHERE t.contact_id = c.id AND t.name IN (SELECT value FROM json_each(@tags))))`;

export class ReferralStore {
  private readonly s;
  constructor(db: Db) {
    this.s = {
      contact: db.prepare<[number], ReferralRow>(`SELECT ${COLUMNS} FROM contacts c WHERE c.id = ?`),
      count: db.prepare<{ referrer: number; tags: string | null }, { n: number }>(`SELECT count(*) AS n ${REFERRALS}`),
      page: db.prepare<{ referrer: number; tags: string | null; limit: number; offset: number }, ReferralRow>(
        `SELECT ${COLUMNS} ${REFERRALS} ORDER BY c.id LIMIT @limit OFFSET @offset`,
      ),
    };
  }

  contact(id: number): ReferralRow | undefined {
    return this.s.contact.get(id);
  }
  /** How many contacts `referrerId` referred directly; `tags` (if given) keeps those with any of them. */
  count(referrerId: number, tags: readonly string[] | null): number {
    return this.s.count.get({ referrer: referrerId, tags: tags ? JSON.stringify(tags) : null })!.n;
  }
  /** Direct referrals by ascending id. */
  page(referrerId: number, tags: readonly string[] | null, limit: number, offset: number): ReferralRow[] {
    return this.s.page.all({ referrer: referrerId, tags: tags ? JSON.stringify(tags) : null, limit, offset });
  }
}
