/** Referrals on PostgreSQL (the SQLite part: ../referrals.ts): live, non-preview contacts a contact referred. */
import type { Surface } from '../store-api.js';
import type { ReferralRow, ReferralStore } from '../referrals.js';
import type { PgConnection } from './connection.js';

const COLUMNS = 'c.id, c.bot_id, c.name, c.messenger, c.created_at, c.referrer_id, c.deleted_at';
// $2 is null (no tag filter) or the tag names, any of which qualifies.
const REFERRALS = `FROM contacts c WHERE c.referrer_id = $1 AND c.deleted_at IS NULL AND c.preview = 0
  AND ($2::text[] IS NULL OR EXISTS (SELECT 1 FROM contact_tags t WHERE t.contact_id = c.id AND t.name = ANY($2::text[])))`;

export class PgReferralStore implements Surface<ReferralStore> {
  constructor(private readonly c: PgConnection) {}

  contact(id: number): ReferralRow | undefined {
    return this.c.one<ReferralRow>(`SELECT ${COLUMNS} FROM contacts c WHERE c.id = $1`, [id]);
  }
  count(referrerId: number, tags: readonly string[] | null): number {
    return this.c.one<{ n: number }>(`SELECT count(*) AS n ${REFERRALS}`, [referrerId, tags])!.n;
  }
  page(referrerId: number, tags: readonly string[] | null, limit: number, offset: number): ReferralRow[] {
    return this.c.query<ReferralRow>(`SELECT ${COLUMNS} ${REFERRALS} ORDER BY c.id LIMIT $3 OFFSET $4`, [referrerId, tags, limit, offset])
      .rows;
  }
}
