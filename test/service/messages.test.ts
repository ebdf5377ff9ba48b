/**
 * sendMessage (extended) over real HTTP: by contact_id or bot_id + messenger +
 * contact_external_id; the built-in service appends to the conversation, which
 * `admin conversation --contact ID` (the built CLI) prints.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { extendedFixture } from '../helpers/extended.js';
import { queryRows } from '../helpers/store.js';
import { useWorld } from '../helpers/world.js';

const T0 = new Date('2026-04-01T12:00:00Z');
const w = useWorld(extendedFixture, { now: () => T0 });

function outbox(contactId: number) {
  return queryRows(
    w.store,
    "SELECT text, image, file, created_at FROM conversation WHERE contact_id = ? AND direction = 'out' ORDER BY id",
    [contactId],
  );
}

describe('sendMessage', () => {
  it('by contact_id → {success: true}; the message is appended to the conversation with a time', async () => {
    const res = await w.call('sendMessage', { contact_id: 100, text: 'Hello Ann' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(outbox(100)).toEqual([{ text: 'Hello Ann', image: null, file: null, created_at: '2026-04-01T12:00:00+00:00' }]);
  });

  it('by bot_id + messenger + contact_external_id: the messenger user id, or the phone', async () => {
    const byId = await w.call('sendMessage', {
      bot_id: 10,
      messenger: 'vk',
      contact_external_id: '777',
      image: 'https://img.example.com/a.png',
    });
    expect(byId.body).toEqual({ success: true });
    const byPhone = await w.call(
      'sendMessage',
      { bot_id: 10, messenger: 'vk', contact_external_id: '+79005550000', file: 'http://files.example.com/menu.pdf' },
      { form: true },
    );
    expect(byPhone.body).toEqual({ success: true });
    expect(outbox(103)).toEqual([
      { text: null, image: 'https://img.example.com/a.png', file: null, created_at: '2026-04-01T12:00:00+00:00' },
      { text: null, image: null, file: 'http://files.example.com/menu.pdf', created_at: '2026-04-01T12:00:00+00:00' },
    ]);
  });

  it('admin conversation --contact ID prints it, oldest first, as JSON lines (built CLI)', () => {
    const r = runCli(['admin', 'conversation', '--contact', '103', '--db', w.dbFile]);
    expect(r.status).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.direction, l.text, l.image, l.file])).toEqual([
      ['out', null, 'https://img.example.com/a.png', null],
      ['out', null, null, 'http://files.example.com/menu.pdf'],
    ]);
  });

  it('at least one of text, image, file (422)', async () => {
    const res = await w.call('sendMessage', { contact_id: 100 });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['text']);
    expect(outbox(100)).toHaveLength(1);
  });

  it('text up to 4096 characters; image and file http(s) URLs (422)', async () => {
    const long = await w.call('sendMessage', { contact_id: 100, text: 'я'.repeat(4097) });
    expect(long.body.errors).toEqual({ text: ['The text field must not be greater than 4096 characters.'] });
    expect((await w.call('sendMessage', { contact_id: 100, text: 'я'.repeat(4096) })).status).toBe(200);
    const urls = await w.call('sendMessage', { contact_id: 100, image: 'ftp://x/a.png', file: 'not a url' });
    expect(urls.status).toBe(422);
    expect(Object.keys(urls.body.errors)).toEqual(['image', 'file']);
  });

  it('contact_id or bot_id required; with bot_id, messenger and contact_external_id required (422)', async () => {
    const none = await w.call('sendMessage', { text: 'x' });
    expect(none.status).toBe(422);
    expect(Object.keys(none.body.errors)).toEqual(['contact_id', 'bot_id']);
    const half = await w.call('sendMessage', { bot_id: 10, text: 'x' });
    expect(half.status).toBe(422);
    expect(Object.keys(half.body.errors)).toEqual(['messenger', 'contact_external_id']);
    const badMessenger = await w.call('sendMessage', { bot_id: 10, messenger: 'icq', contact_external_id: '1', text: 'x' });
    expect(badMessenger.body.errors).toEqual({ messenger: ['The selected messenger is invalid.'] });
  });

  it('unsubscribed contact: 422 on contact_id, nothing appended', async () => {
    const res = await w.call('sendMessage', { contact_id: 102, text: 'Come back' });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['contact_id']);
    const byExternal = await w.call('sendMessage', { bot_id: 10, messenger: 'telegram', contact_external_id: '5002', text: 'x' });
    expect(byExternal.status).toBe(422);
    expect(outbox(102)).toEqual([]);
  });

  it('missing contact 404, deleted 404, foreign 403; unknown external id 404; foreign or deleted bot 403/404', async () => {
    expect((await w.call('sendMessage', { contact_id: 999, text: 'x' })).status).toBe(404);
    expect((await w.call('sendMessage', { contact_id: 101, text: 'x' })).status).toBe(404);
    expect((await w.call('sendMessage', { contact_id: 200, text: 'x' })).status).toBe(403);
    const unknown = await w.call('sendMessage', { bot_id: 10, messenger: 'telegram', contact_external_id: '424242', text: 'x' });
    expect(unknown.status).toBe(404);
    expect(Object.keys(unknown.body.errors)).toEqual(['contact_external_id']);
    // The deleted contact 101's telegram id does not find it.
    expect((await w.call('sendMessage', { bot_id: 10, messenger: 'telegram', contact_external_id: '5009', text: 'x' })).status).toBe(404);
    expect((await w.call('sendMessage', { bot_id: 20, messenger: 'telegram', contact_external_id: '7001', text: 'x' })).status).toBe(403);
    expect((await w.call('sendMessage', { bot_id: 11, messenger: 'telegram', contact_external_id: '5010', text: 'x' })).status).toBe(404);
    expect(outbox(200)).toEqual([]);
  });

  it('is POST only (405 for GET)', async () => {
    expect((await w.call('sendMessage', { contact_id: 100, text: 'x' }, { verb: 'GET' })).status).toBe(405);
  });
});
