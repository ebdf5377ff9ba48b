/**
 * Handlers of list schemas: reading, creating and deleting lists, adding and deleting fields.
 * A list is reachable when its project is the holder's own (invited projects are not).
 */
import { isCurrency } from '../api/currency.js';
import { ApiError, fail } from '../api/errors.js';
import {
  isReservedSlug,
  LIST_PAGE_SIZE,
  MAX_LISTS_PER_PROJECT,
  RESERVED_SLUGS,
  type addListSchemaField,
  type createListSchema,
  type deleteListSchema,
  type deleteListSchemaField,
  type FieldDef,
  type getListSchema,
  type getListSchemas,
} from '../api/lists.js';
import { orderedObject } from '../common/ordered.js';
import type { Infer, Shape } from '../api/rules.js';
import type { ListRow, StoredField } from '../store/lists.js';
import { newObjectId } from '../store/lists.js';
import { isoTime } from '../store/time.js';
import type { Ctx } from './context.js';
import { keptAnswerOf } from './rendered.js';
import { paginate, pageNumber } from './paginate.js';

/** The validated parameters of a method. */
export type P<M extends { params: Shape }> = Infer<M['params']>;

/** A list schema as the API shows it; `fields` keeps the list's field order. */
export interface ListView {
  id: string;
  fields: Record<string, FieldDef>;
  name: string;
  bot_id: number | null;
  project: string;
  is_menu: boolean;
  created_at: string;
  updated_at: string;
}

/** The fields of a stored list, in order. */
export function listFields(row: { fields: string }): StoredField[] {
  return JSON.parse(row.fields) as StoredField[];
}

function fieldView(f: StoredField): FieldDef {
  const out: FieldDef = { name: f.name, type: f.type as FieldDef['type'] } as FieldDef;
  if (f.type === 'money') out.currency = f.currency ?? 'USD';
  out.is_required = f.is_required;
  out.is_hidden = f.is_hidden;
  out.is_encryptable = f.is_encryptable;
  return out;
}

function listView(row: ListRow): ListView {
  return {
    id: row.id,
    fields: orderedObject(listFields(row).map((f) => [f.slug, fieldView(f)] as const)),
    name: row.name,
    bot_id: row.bot_id,
    project: row.project_uuid,
    is_menu: row.is_menu === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The holder's list, or 404 (`message`, `error`, `errors.schema_id`) / 403. */
export function requireList(ctx: Ctx, schemaId: string): ListRow {
  const row = ctx.store.lists.byId(schemaId);
  if (!row) {
    const msg = 'List not found.';
    throw new ApiError('schema_not_found', msg, { schema_id: [msg] });
  }
  if (row.owner_id !== ctx.owner.id) throw fail.forbidden('You have no access to this list.');
  return row;
}

type FieldInput = {
  name: string;
  slug: string;
  type: StoredField['type'];
  currency?: string;
  is_required?: boolean;
  is_hidden?: boolean;
  is_encryptable?: boolean;
};

const RESERVED_TEXT = RESERVED_SLUGS.join(', ');

/**
 * Check one field's slug and currency beyond the parameter rules; errors go to `bag` under
 * `key` (`fields.0`, `field`). `taken` holds the slugs already in the list.
 */
function checkField(f: FieldInput, key: string, taken: Set<string>, bag: Map<string, string[]>, mode: 'create' | 'add'): StoredField {
  const add = (k: string, msg: string) => bag.set(k, [...(bag.get(k) ?? []), msg]);
  if (isReservedSlug(f.slug)) add(`${key}.slug`, `The ${key}.slug field must not be a reserved name (${RESERVED_TEXT}).`);
  else if (taken.has(f.slug))
    add(`${key}.slug`, mode === 'create' ? `The ${key}.slug field has a duplicate value.` : `The ${key}.slug has already been taken.`);
  taken.add(f.slug);
  const out: StoredField = {
    slug: f.slug,
    name: f.name,
    type: f.type,
    is_required: f.is_required ?? true,
    is_hidden: f.is_hidden ?? false,
    is_encryptable: f.is_encryptable ?? false,
  };
  if (f.type === 'money') {
    if (f.currency === undefined) {
      if (mode === 'add') add(`${key}.currency`, `The ${key}.currency field is required when ${key}.type is money.`);
      out.currency = 'USD';
    } else if (!isCurrency(f.currency)) {
      add(`${key}.currency`, `The selected ${key}.currency is invalid.`);
    } else {
      out.currency = f.currency;
    }
  }
  return out;
}

/** Where a new list goes: the bot's project (bot_id wins) or the project; 422 when missing. */
function resolveTarget(
  ctx: Ctx,
  p: { bot_id?: number; project_uuid?: string },
  bag: Map<string, string[]>,
): { projectUuid?: string; ownerId?: number; botId: number | null } {
  if (p.bot_id !== undefined) {
    const bot = ctx.store.projects.bot(p.bot_id);
    if (!bot || bot.deleted_at) {
      bag.set('bot_id', ['The selected bot id is invalid.']);
      return { botId: null };
    }
    return { projectUuid: bot.project_uuid, ownerId: bot.owner_id, botId: bot.id };
  }
  if (p.project_uuid === undefined) return { botId: null };
  const project = ctx.store.projects.get(p.project_uuid);
  if (!project) {
    bag.set('project_uuid', ['The selected project uuid is invalid.']);
    return { botId: null };
  }
  return { projectUuid: project.uuid, ownerId: project.owner_id, botId: null };
}

/** The field checks of checkField on whatever passed the rules (a partial field). */
function precheckField(f: unknown, key: string, taken: Set<string>, bag: Map<string, string[]>, mode: 'create' | 'add'): void {
  if (!f || typeof f !== 'object') return;
  const field = f as Partial<FieldInput>;
  if (typeof field.slug !== 'string' || typeof field.type !== 'string') {
    if (typeof field.slug === 'string') taken.add(field.slug);
    return;
  }
  const local = new Map<string, string[]>();
  checkField(field as FieldInput, key, taken, local, mode);
  // A key the rules already refused keeps the rule's message.
  for (const [k, v] of local) if (!bag.has(k)) bag.set(k, v);
}

export const listPrechecks = {
  createListSchema(ctx: Ctx, partial: Record<string, unknown>, bag: Map<string, string[]>): void {
    const target = { bot_id: partial.bot_id as number | undefined, project_uuid: partial.project_uuid as string | undefined };
    if (!bag.has('bot_id') && !bag.has('project_uuid')) resolveTarget(ctx, target, bag);
    const taken = new Set<string>();
    const fields = Array.isArray(partial.fields) ? partial.fields : [];
    fields.forEach((f, i) => precheckField(f, `fields.${i}`, taken, bag, 'create'));
  },
  addListSchemaField(ctx: Ctx, partial: Record<string, unknown>, bag: Map<string, string[]>): void {
    if (typeof partial.schema_id !== 'string') return;
    const row = ctx.store.lists.byId(partial.schema_id);
    // A missing or foreign list is the handler's 404 or 403, not a field error.
    if (!row || row.owner_id !== ctx.owner.id) return;
    precheckField(partial.field, 'field', new Set(listFields(row).map((x) => x.slug)), bag, 'add');
  },
};

export const listHandlers = {
  getListSchemas(ctx: Ctx, p: P<typeof getListSchemas>) {
    const page = pageNumber(p.page);
    const { rows, total } = ctx.store.lists.ownerPage(ctx.owner.id, LIST_PAGE_SIZE, (page - 1) * LIST_PAGE_SIZE);
    return paginate({ items: rows.map(listView), total, page, perPage: LIST_PAGE_SIZE, path: ctx.url, metaLinks: false });
  },

  getListSchema(ctx: Ctx, p: P<typeof getListSchema>) {
    const row = requireList(ctx, p.schema_id);
    // Kept with the list's cached row (its fields parsed once): made again once the row is.
    return keptAnswerOf(row, () => ({ data: listView(row) }));
  },

  createListSchema(ctx: Ctx, p: P<typeof createListSchema>) {
    const bag = new Map<string, string[]>();
    const { projectUuid, ownerId, botId } = resolveTarget(ctx, p, bag);
    const taken = new Set<string>();
    const fields = p.fields.map((f, i) => checkField(f as FieldInput, `fields.${i}`, taken, bag, 'create'));
    if (bag.size > 0) throw fail.validation(bag);
    if (ownerId !== ctx.owner.id) {
      throw fail.forbidden(botId !== null ? 'You have no access to this bot.' : 'You have no access to this project.');
    }
    const id = newObjectId(ctx.now);
    ctx.store.tx(() => {
      if (ctx.store.lists.projectCount(projectUuid!) >= MAX_LISTS_PER_PROJECT) {
        throw new ApiError('list_limit', `The project already has ${MAX_LISTS_PER_PROJECT} lists, the most a project can hold.`);
      }
      ctx.store.lists.insert({
        id,
        project_uuid: projectUuid!,
        bot_id: botId,
        name: p.name,
        is_menu: p.is_menu ?? false,
        fields,
        now: isoTime(ctx.now),
      });
    });
    return { data: listView(ctx.store.lists.byId(id)!) };
  },

  deleteListSchema(ctx: Ctx, p: P<typeof deleteListSchema>) {
    ctx.store.tx(() => {
      const row = requireList(ctx, p.schema_id);
      ctx.store.lists.delete(row.seq);
    });
  },

  addListSchemaField(ctx: Ctx, p: P<typeof addListSchemaField>) {
    ctx.store.tx(() => {
      const row = requireList(ctx, p.schema_id);
      const fields = listFields(row);
      const bag = new Map<string, string[]>();
      const field = checkField(p.field as FieldInput, 'field', new Set(fields.map((f) => f.slug)), bag, 'add');
      if (bag.size > 0) throw fail.validation(bag);
      ctx.store.lists.setFields(row.seq, [...fields, field], isoTime(ctx.now));
    });
  },

  deleteListSchemaField(ctx: Ctx, p: P<typeof deleteListSchemaField>) {
    ctx.store.tx(() => {
      const row = requireList(ctx, p.schema_id);
      const fields = listFields(row);
      if (!fields.some((f) => f.slug === p.slug)) throw fail.invalid('slug', 'The selected slug is invalid.');
      ctx.store.lists.deleteField(
        row.seq,
        fields.filter((f) => f.slug !== p.slug),
        p.slug,
        isoTime(ctx.now),
      );
    });
  },
};
