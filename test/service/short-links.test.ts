/**
 * decodeShortLink (extended) over real HTTP, and the signing functions: media variables show a
 * short link the service issued; decoding gives a signed, expiring link to the stored file.
 */
import { describe, expect, it } from 'vitest';
import { parseShortLink, shortLinkFor, signFileLink, verifyFileLink } from '../../src/service/short-links.js';
import { extendedFixture, PHOTO_URL } from '../helpers/extended.js';
import { useWorld } from '../helpers/world.js';

const T0 = new Date('2026-04-01T12:00:00Z');
const KEY = Buffer.alloc(32, 1);
const w = useWorld(extendedFixture, { now: () => T0 });

async function photoLink(): Promise<string> {
  const vars = (await w.call('getContactVariables', { contact_id: 100 })).body.data as Array<{ name: string; value: string }>;
  return vars.find((v) => v.name === 'photo')!.value;
}

describe('short links in the contact view', () => {
  it('a media variable (type 1-4) shows a short link the service issued, the same every time', async () => {
    const res = await w.call('getContacts', { bot_id: 10 });
    const ann = (res.body.data as Array<Record<string, any>>).find((c) => c.id === 100)!;
    const photo = ann.variables.find((v: { name: string }) => v.name === 'photo');
    expect(photo.type).toBe(1);
    expect(photo.value).toMatch(/^http:\/\/localhost\/s\/\d+-[A-Za-z0-9_-]{22}$/);
    expect(photo.value).not.toContain('files.example.com');
    expect(await photoLink()).toBe(photo.value);
    // Text variables keep their value.
    expect(ann.variables.find((v: { name: string }) => v.name === 'city').value).toBe('Paris');
  });
});

describe('decodeShortLink', () => {
  it('→ {data: {url}}: the stored file with expires_at and sign in its query', async () => {
    const res = await w.call('decodeShortLink', { url: await photoLink() }, { verb: 'GET' });
    expect(res.status).toBe(200);
    const url = res.body.data.url as string;
    expect(url.startsWith(`${PHOTO_URL}&expires_at=`)).toBe(true);
    const q = new URL(url).searchParams;
    expect(q.get('size')).toBe('big');
    expect(Number(q.get('expires_at'))).toBe(T0.getTime() / 1000 + 3600);
    expect(q.get('sign')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a malformed URL: 422 on url', async () => {
    for (const url of ['not a url', 'localhost/s/1-x', 'mailto:a@b']) {
      const res = await w.call('decodeShortLink', { url });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual({ url: ['The url field must be a valid URL.'] });
    }
    expect((await w.call('decodeShortLink', {})).body.errors).toEqual({ url: ['The url field is required.'] });
  });

  it('one the service did not issue: 404 (other host, forged tag, text variable, missing variable)', async () => {
    const link = await photoLink();
    const id = Number(/\/s\/(\d+)-/.exec(link)![1]);
    const textVar = (await w.call('getContactVariables', { contact_id: 100 })).body.data.find((v: { name: string }) => v.name === 'city');
    for (const url of [
      'https://example.com/s/1-AAAAAAAAAAAAAAAAAAAAAA',
      link.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A')),
      `http://localhost/s/${id + 1000}-${link.split('-').pop()}`,
      shortLinkFor(Buffer.alloc(32, 9), id),
      shortLinkFor(Buffer.alloc(32, 7), 99999),
      `http://localhost/s/${textVar.id}`,
    ]) {
      const res = await w.call('decodeShortLink', { url });
      expect(res.status, url).toBe(404);
    }
  });

  it("another account's media variable: 403; a deleted contact's: 404", async () => {
    const bobVars = await w.call('getContactVariables', { contact_id: 200 }, { key: 'bob-key' });
    const scan = bobVars.body.data[0].value as string;
    expect((await w.call('decodeShortLink', { url: scan }, { key: 'bob-key' })).status).toBe(200);
    expect((await w.call('decodeShortLink', { url: scan })).status).toBe(403);
    const link = await photoLink();
    w.store.admin.deleteContact(100);
    expect((await w.call('decodeShortLink', { url: link })).status).toBe(404);
  });
});

describe('signed file links', () => {
  const now = new Date('2026-04-01T12:00:00Z');
  const exp = now.getTime() / 1000 + 60;
  const link = signFileLink(KEY, 'https://files.example.com/a.pdf?v=2#page=3', exp);

  it('verify: a fresh link is ok; the fragment is dropped', () => {
    expect(link).toMatch(/^https:\/\/files\.example\.com\/a\.pdf\?v=2&expires_at=\d+&sign=[0-9a-f]{64}$/);
    expect(verifyFileLink(KEY, link, now)).toBe('ok');
    expect(verifyFileLink(KEY, signFileLink(KEY, 'https://f.example.com/b', exp), now)).toBe('ok');
  });

  it('refuses a tampered link: path, query, expires_at, sign, or another key', () => {
    expect(verifyFileLink(KEY, link.replace('a.pdf', 'b.pdf'), now)).toBe('bad_signature');
    expect(verifyFileLink(KEY, link.replace('v=2', 'v=3'), now)).toBe('bad_signature');
    expect(verifyFileLink(KEY, link.replace(`expires_at=${exp}`, `expires_at=${exp + 3600}`), now)).toBe('bad_signature');
    const sign = link.slice(-64);
    expect(verifyFileLink(KEY, link.slice(0, -64) + (sign[0] === 'a' ? 'b' : 'a') + sign.slice(1), now)).toBe('bad_signature');
    expect(verifyFileLink(Buffer.alloc(32, 2), link, now)).toBe('bad_signature');
    expect(verifyFileLink(KEY, `${link}&x=1`, now)).toBe('malformed');
    expect(verifyFileLink(KEY, link.replace(/&sign=.*/, ''), now)).toBe('malformed');
  });

  it('refuses an expired link (at expires_at and after)', () => {
    expect(verifyFileLink(KEY, link, new Date(exp * 1000 - 1))).toBe('ok');
    expect(verifyFileLink(KEY, link, new Date(exp * 1000))).toBe('expired');
    expect(verifyFileLink(KEY, link, new Date(exp * 1000 + 86_400_000))).toBe('expired');
  });

  it('a short link parses back to its variable only with the key that issued it', () => {
    expect(parseShortLink(KEY, shortLinkFor(KEY, 42))).toBe(42);
    expect(parseShortLink(Buffer.alloc(32, 3), shortLinkFor(KEY, 42))).toBeUndefined();
    expect(parseShortLink(KEY, shortLinkFor(KEY, 42).replace('/42-', '/43-'))).toBeUndefined();
    // Every other last character is refused, including those base64url decodes to the same bytes.
    const good = shortLinkFor(KEY, 42);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (const ch of alphabet) {
      if (ch !== good.at(-1)) expect(parseShortLink(KEY, good.slice(0, -1) + ch)).toBeUndefined();
    }
  });
});
