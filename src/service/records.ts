/**
 * Handlers of list records: values checked by field type, required fields on add, filters,
 * ordering, paging, and AES-256-GCM encryption at rest of `is_encryptable` fields (secrets.ts).
 *
 * Encrypted fields hold ciphertext in SQL, so they cannot be filtered or sorted on: such a
 * filter or order is refused with a 422, and `bot_id` / `contact_id` look only at bot and
 * contact fields that are not encrypted.
 */
import { fail } from '../api/errors.js';
import { orderedObject } from '../common/ordered.js';
import {
  MAX_TEXT_LENGTH,
  type ListRecord,
  type addListItem,
  type deleteListItem,
  type getListItems,
  type updateListItem,
} from '../api/records.js';
import { charLength } from '../api/rules.js';
import type { RecordOrder, RecordRow, StoredField } from '../store/lists.js';
import { newObjectId } from '../store/lists.js';
import { isoTime } from '../store/time.js';
import type { Ctx } from './context.js';
import { listFields, requireList, type P } from './lists.js';
import { pageNumber, paginate } from './paginate.js';
import { openValue as decrypt, sealValue as encrypt } from './secrets.js';

type Bag = Map<string, string[]>;

const NUMBER_TEXT = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/;
const INTEGER_TEXT = /^-?(0|[1-9][0-9]*)$/;
const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_TEXT = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;

function asInteger(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && INTEGER_TEXT.test(v) && Number.isSafeInteger(Number(v))) return Number(v);
  return undefined;
}

function isValidDate(text: string): boolean {
  const m = DATE_TEXT.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const dt = new Date(Date.UTC(y, mo - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === mo - 1 && dt.getUTCDate() === d;
}

function isHttpUrl(text: string): boolean {
  if (!/^https?:\/\//i.test(text)) return false;
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * A value of `field` as stored, or an error text. `owned` checks contact and bot IDs against
 * the holder (values to store); filters only need the right type.
 */
function checkValue(ctx: Ctx, field: StoredField, key: string, v: unknown, owned: boolean): { value: unknown } | { error: string } {
  switch (field.type) {
    case 'string':
      if (typeof v !== 'string') return { error: `The ${key} field must be a string.` };
      if (charLength(v) > MAX_TEXT_LENGTH) return { error: `The ${key} field must not be greater than ${MAX_TEXT_LENGTH} characters.` };
      return { value: v };
    case 'number': {
      if (typeof v === 'number' && Number.isFinite(v)) return { value: v };
      if (typeof v === 'string' && NUMBER_TEXT.test(v) && Number.isFinite(Number(v))) return { value: Number(v) };
      return { error: `The ${key} field must be a number.` };
    }
    case 'bool':
      if (v === true || v === 1 || v === '1') return { value: true };
      if (v === false || v === 0 || v === '0') return { value: false };
      return { error: `The ${key} field must be true or false.` };
    case 'date':
      if (typeof v === 'string' && isValidDate(v)) return { value: v };
      return { error: `The ${key} field must match the format Y-m-d.` };
    case 'datetime': {
      if (typeof v === 'string' && DATETIME_TEXT.test(v)) {
        let text = v.replace(' ', 'T');
        if (!/(Z|[+-]\d{2}(:?\d{2})?)$/i.test(text)) text += 'Z';
        const d = new Date(text);
        if (!Number.isNaN(d.getTime())) return { value: isoTime(d) };
      }
      return { error: `The ${key} field must be a valid ISO 8601 date and time.` };
    }
    case 'money': {
      const n = asInteger(v);
      if (n === undefined) return { error: `The ${key} field must be an integer (minor units of ${field.currency ?? 'USD'}).` };
      return { value: n };
    }
    case 'file':
    case 'image':
      if (typeof v === 'string' && isHttpUrl(v)) return { value: v };
      return { error: `The ${key} field must be a valid URL.` };
    case 'contact': {
      const id = asInteger(v);
      if (id === undefined) return { error: `The ${key} field must be an integer.` };
      if (owned) {
        const c = ctx.store.contacts.access(id);
        if (!c || c.deleted_at || c.bot_deleted_at || c.owner_id !== ctx.owner.id) return { error: `The selected ${key} is invalid.` };
      }
      return { value: id };
    }
    case 'bot': {
      const id = asInteger(v);
      if (id === undefined) return { error: `The ${key} field must be an integer.` };
      if (owned) {
        const b = ctx.store.projects.bot(id);
        if (!b || b.deleted_at || b.owner_id !== ctx.owner.id) return { error: `The selected ${key} is invalid.` };
      }
      return { value: id };
    }
    default:
      return { error: `The ${key} field has an unknown type.` };
  }
}

/** A record as the API shows it: own keys, then every field in order, null where unset. */
function recordView(ctx: Ctx, schemaId: string, fields: StoredField[], row: RecordRow): ListRecord {
  const data = JSON.parse(row.data) as Record<string, unknown>;
  const entries: Array<readonly [string, unknown]> = [
    ['id', row.id],
    ['schema_id', schemaId],
    ['created_at', row.created_at],
    ['updated_at', row.updated_at],
  ];
  for (const f of fields) {
    const stored = Object.hasOwn(data, f.slug) ? data[f.slug] : null;
    entries.push([f.slug, stored === null ? null : f.is_encryptable ? decrypt(ctx.secrets.encryptionKey, row.id, f.slug, stored) : stored]);
  }
  return orderedObject(entries) as ListRecord;
}

function addError(bag: Bag, key: string, msg: string): void {
  bag.set(key, [...(bag.get(key) ?? []), msg]);
}

/**
 * Apply `input` to `data` (the stored values of record `recordId`): checks every value,
 * refuses unknown slugs, and on add requires the required fields. Throws a 422 listing all.
 */
function applyValues(
  ctx: Ctx,
  fields: StoredField[],
  recordId: string,
  data: Record<string, unknown>,
  input: Record<string, unknown>,
  isAdd: boolean,
): void {
  const bag: Bag = new Map();
  const known = new Set(fields.map((f) => f.slug));
  for (const f of fields) {
    const key = `data.${f.slug}`;
    const given = Object.hasOwn(input, f.slug);
    const v = given ? input[f.slug] : undefined;
    if (v === undefined || v === null) {
      if (f.is_required && (isAdd || given)) addError(bag, key, `The ${key} field is required.`);
      else if (given) delete data[f.slug];
      continue;
    }
    const checked = checkValue(ctx, f, key, v, true);
    if ('error' in checked) addError(bag, key, checked.error);
    else data[f.slug] = f.is_encryptable ? encrypt(ctx.secrets.encryptionKey, recordId, f.slug, checked.value) : checked.value;
  }
  for (const slug of Object.keys(input)) {
    if (!known.has(slug)) addError(bag, `data.${slug}`, `The data.${slug} field is not a field of this list.`);
  }
  if (bag.size > 0) throw fail.validation(bag);
}

/** The holder's record, or 404 on `item_id` (missing, or its list deleted) / 403. */
function requireRecord(ctx: Ctx, itemId: string) {
  const rec = ctx.store.lists.record(itemId);
  if (!rec) throw fail.notFoundOn('item_id', 'Record not found.');
  if (rec.owner_id !== ctx.owner.id) throw fail.forbidden('You have no access to this record.');
  return rec;
}

/** `filters` as a plain object: an object, its JSON text, or nothing. */
function readFilters(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  let v = raw;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      throw fail.invalid('filters', 'The filters field must be an object of field slugs and values, or its JSON text.');
    }
  }
  if (Array.isArray(v) && v.length === 0) return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw fail.invalid('filters', 'The filters field must be an object of field slugs and values, or its JSON text.');
  }
  return v as Record<string, unknown>;
}

function parseOrder(raw: string | undefined, fields: StoredField[]): { order: RecordOrder; slug?: string; desc: boolean } {
  if (raw === undefined) return { order: 'id', desc: false };
  const bad = () => fail.invalid('order_by', 'The selected order by is invalid.');
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.length > 2) throw bad();
  const [col, dirText] = parts as [string, string | undefined];
  const dir = (dirText ?? 'asc').toLowerCase();
  if (dir !== 'asc' && dir !== 'desc') throw bad();
  const desc = dir === 'desc';
  if (col === 'id' || col === 'created_at') return { order: col, desc };
  const f = fields.find((x) => x.slug === col);
  if (!f) throw bad();
  if (f.is_encryptable) throw fail.invalid('order_by', 'The order by field cannot be an encrypted field.');
  return { order: 'slug', slug: col, desc };
}

export const recordHandlers = {
  getListItems(ctx: Ctx, p: P<typeof getListItems>) {
    const list = requireList(ctx, p.schema_id);
    const fields = listFields(list);
    const page = pageNumber(p.page);
    const limit = p.limit ?? 20;
    const order = parseOrder(p.order_by, fields);
    const bag: Bag = new Map();
    const filters: Record<string, unknown> = {};
    for (const [slug, v] of Object.entries(readFilters(p.filters))) {
      const key = `filters.${slug}`;
      const f = fields.find((x) => x.slug === slug);
      if (!f) addError(bag, key, `The selected ${key} is invalid.`);
      else if (f.is_encryptable) addError(bag, key, `The ${key} field cannot be filtered: the field is encrypted.`);
      else if (v === null || v === undefined) filters[slug] = null;
      else {
        const checked = checkValue(ctx, f, key, v, false);
        if ('error' in checked) addError(bag, key, checked.error);
        // SQLite reads JSON true/false as 1/0.
        else filters[slug] = typeof checked.value === 'boolean' ? (checked.value ? 1 : 0) : checked.value;
      }
    }
    if (bag.size > 0) throw fail.validation(bag);
    const plain = (type: string) => fields.filter((f) => f.type === type && !f.is_encryptable).map((f) => f.slug);
    const { rows, total } = ctx.store.lists.recordPage({
      schemaSeq: list.seq,
      filters,
      bot: p.bot_id !== undefined ? { slugs: plain('bot'), id: p.bot_id } : undefined,
      contact: p.contact_id !== undefined ? { slugs: plain('contact'), id: p.contact_id } : undefined,
      ...order,
      limit,
      offset: (page - 1) * limit,
    });
    return paginate({
      items: rows.map((row) => recordView(ctx, list.id, fields, row)),
      total,
      page,
      perPage: limit,
      path: ctx.url,
      metaLinks: false,
    });
  },

  addListItem(ctx: Ctx, p: P<typeof addListItem>) {
    return ctx.store.tx(() => {
      const list = requireList(ctx, p.schema_id);
      const fields = listFields(list);
      const id = newObjectId(ctx.now);
      const data: Record<string, unknown> = {};
      applyValues(ctx, fields, id, data, p.data, true);
      const now = isoTime(ctx.now);
      ctx.store.lists.insertRecord({ id, schema_seq: list.seq, data, now });
      return { data: recordView(ctx, list.id, fields, ctx.store.lists.record(id)!) };
    });
  },

  updateListItem(ctx: Ctx, p: P<typeof updateListItem>) {
    return ctx.store.tx(() => {
      const rec = requireRecord(ctx, p.item_id);
      const fields = listFields(rec);
      const data = JSON.parse(rec.data) as Record<string, unknown>;
      applyValues(ctx, fields, rec.id, data, p.data, false);
      ctx.store.lists.updateRecord(rec.seq, data, isoTime(ctx.now));
      return { data: recordView(ctx, rec.schema_id, fields, ctx.store.lists.record(rec.id)!) };
    });
  },

  deleteListItem(ctx: Ctx, p: P<typeof deleteListItem>) {
    ctx.store.tx(() => {
      const rec = requireRecord(ctx, p.item_id);
      ctx.store.lists.deleteRecord(rec.seq);
    });
  },
};
