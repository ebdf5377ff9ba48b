/** A world for the extended methods: Alice's contacts with tags, variables (one a file), referrals; Bob's contact. */
import { baseFixture } from './world.js';

const ALICE_PROJECT = '4f1c2a9e-8d7b-4c1e-9a55-0b6f3d2e1a10';
export const PHOTO_URL = 'https://files.example.com/photos/a.jpg?size=big';

export function extendedFixture(): Record<string, unknown> {
  const base = baseFixture();
  const owners = (base.owners as Array<Record<string, unknown>>).map((o) => (o.id === 2 ? { ...o, balance: 123456, currency: 'EUR' } : o));
  return {
    ...base,
    owners,
    bots: [...(base.bots as object[]), { id: 11, project_uuid: ALICE_PROJECT, name: 'Old bot', deleted: true }],
    contacts: [
      {
        id: 100,
        bot_id: 10,
        messenger: 'telegram',
        name: 'Ann',
        telegram_id: '5001',
        phone: '79001234567',
        created_at: '2026-01-01T00:00:00Z',
        tags: ['vip', 'new'],
        variables: [
          { name: 'utm_source', value: 'ads', type: 0 },
          { name: 'photo', value: PHOTO_URL, type: 1 },
          { name: 'city', value: 'Paris', type: 0 },
        ],
      },
      { id: 101, bot_id: 10, messenger: 'telegram', name: 'Gone', telegram_id: '5009', deleted: true, tags: ['ghost'] },
      { id: 102, bot_id: 10, messenger: 'telegram', name: 'Left', telegram_id: '5002', unsubscribed_at: '2026-01-02T00:00:00Z' },
      { id: 103, bot_id: 10, messenger: 'vk', name: 'Vic', vk_user_id: 777, phone: '79005550000' },
      { id: 110, bot_id: 11, messenger: 'telegram', name: 'On deleted bot', telegram_id: '5010' },
      {
        id: 200,
        bot_id: 20,
        messenger: 'telegram',
        name: 'Bob customer',
        telegram_id: '7001',
        tags: ['bobtag'],
        variables: [{ name: 'scan', value: 'https://files.example.com/scan.pdf', type: 2 }],
      },
    ],
  };
}
