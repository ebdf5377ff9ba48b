/**
 * "422 … listing every failing field": the checks that need the database (a bot that exists,
 * reserved and repeated slugs, ISO 4217 currencies, a slug already in the list) are listed in
 * the same answer as the parameter rules, in Laravel's order.
 */
import { describe, expect, it } from 'vitest';
import { baseFixture, useWorld } from '../helpers/world.js';
import { queryRows, TEST_STORE } from '../helpers/store.js';

const w = useWorld(baseFixture);

describe('createListSchema lists every failing field at once', () => {
  it('rule failures and database checks together, top-level keys first', async () => {
    const r = await w.call('createListSchema', {
      name: 'x'.repeat(256),
      bot_id: 999,
      fields: [
        { name: 'A', slug: 'id', type: 'string' },
        { name: 'B', slug: 'price', type: 'money', currency: 'ZZZ' },
        { slug: 'price', type: 'string' },
        { name: 'D', slug: 'a b', type: 'nope' },
      ],
    });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors)).toEqual([
      'name',
      'bot_id',
      'fields.2.name',
      'fields.3.slug',
      'fields.3.type',
      'fields.0.slug',
      'fields.1.currency',
      'fields.2.slug',
    ]);
    expect(r.body.errors.bot_id).toEqual(['The selected bot id is invalid.']);
    expect(r.body.errors['fields.1.currency']).toEqual(['The selected fields.1.currency is invalid.']);
    expect(r.body.errors['fields.2.slug']).toEqual(['The fields.2.slug field has a duplicate value.']);
    expect(r.body.message).toBe('The name field must not be greater than 255 characters. (and 7 more errors)');
  });

  it('addListSchemaField: a taken slug is listed beside a rule failure', async () => {
    const list = await w.call('createListSchema', { name: 'L', bot_id: 10, fields: [{ name: 'A', slug: 'a', type: 'string' }] });
    expect(list.status).toBe(201);
    const r = await w.call('addListSchemaField', { schema_id: list.body.data.id, field: { slug: 'a', type: 'string' } });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors)).toEqual(['field.name', 'field.slug']);
    // A missing list with a bad field: the rules answer first, and no list error is made up.
    const missing = await w.call('addListSchemaField', { schema_id: 'nope', field: { slug: 'a b' } });
    expect(missing.status).toBe(422);
    expect(Object.keys(missing.body.errors)).not.toContain('schema_id');
  });
});

describe('addContactAccount: an unknown currency is listed with the other failing fields', () => {
  it('contact_id and currency both fail in one 422', async () => {
    const r = await w.call('addContactAccount', { contact_id: 'abc', currency: 'usd' });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual({
      contact_id: ['The contact id field must be an integer.'],
      currency: ['The selected currency is invalid.'],
    });
  });
});

describe('a text holding the NUL character ("never a 500"): PostgreSQL cannot store one, SQLite keeps it', () => {
  const lists = () => Number(queryRows<{ n: number }>(w.store, 'SELECT count(*) AS n FROM list_schemas')[0]!.n);

  it('as a list id to look up: no such list on SQLite (404); on PostgreSQL a 422 naming the field', async () => {
    const r = await w.call('addListSchemaField', { schema_id: '\u0000', field: { name: 'A', slug: 'a', type: 'string' } });
    if (TEST_STORE === 'sqlite') expect(r.status).toBe(404);
    else expect([r.status, r.body.errors]).toEqual([422, { schema_id: ['The schema id field must not contain the NUL character.'] }]);
  });

  it('in a text to store: kept as sent on SQLite; on PostgreSQL a 422 naming the field, and nothing is made', async () => {
    const before = lists();
    const r = await w.call('createListSchema', { name: 'L\u0000x', bot_id: 10, fields: [{ name: 'A', slug: 'a', type: 'string' }] });
    if (TEST_STORE === 'sqlite') {
      expect(r.status).toBe(201);
      expect(r.body.data.name).toBe('L\u0000x');
      expect(lists()).toBe(before + 1);
    } else {
      expect(r.status).toBe(422);
      expect(r.body.errors).toEqual({ name: ['The name field must not contain the NUL character.'] });
      expect(lists()).toBe(before);
    }
  });
});
