/**
 * One successful call of every tool, in an order where each can use what the earlier ones made
 * (the list, the record, the account). A method that lands in the catalog without a sample
 * here makes the coverage test fail, so every tool keeps being called at least once.
 */
export interface SampleState {
  schemaId?: string;
  itemId?: string;
  accountId?: number;
  shortLink?: string;
  planId?: string;
}

export interface Sample {
  name: string;
  args(s: SampleState): Record<string, unknown>;
  /** Keep what later samples need from the structured result. */
  keep?(s: SampleState, body: any): void;
}

export const SAMPLES: Sample[] = [
  { name: 'getMe', args: () => ({}) },
  { name: 'getBalance', args: () => ({}) },
  { name: 'getListSchemas', args: () => ({}) },
  {
    name: 'createListSchema',
    args: () => ({
      name: 'Orders',
      bot_id: 10,
      fields: [
        { name: 'Order', slug: 'order', type: 'string' },
        { name: 'Total', slug: 'total', type: 'money', currency: 'USD' },
      ],
    }),
    keep: (s, b) => (s.schemaId = b.data.id),
  },
  { name: 'getListSchema', args: (s) => ({ schema_id: s.schemaId }) },
  {
    name: 'addListSchemaField',
    args: (s) => ({ schema_id: s.schemaId, field: { name: 'Note', slug: 'note', type: 'string', is_required: false } }),
  },
  { name: 'deleteListSchemaField', args: (s) => ({ schema_id: s.schemaId, slug: 'note' }) },
  {
    name: 'addListItem',
    args: (s) => ({ schema_id: s.schemaId, data: { order: 'A-1', total: 1250 } }),
    keep: (s, b) => (s.itemId = b.data.id),
  },
  { name: 'getListItems', args: (s) => ({ schema_id: s.schemaId }) },
  { name: 'updateListItem', args: (s) => ({ item_id: s.itemId, data: { order: 'A-2' } }) },
  { name: 'deleteListItem', args: (s) => ({ item_id: s.itemId }) },
  { name: 'deleteListSchema', args: (s) => ({ schema_id: s.schemaId }) },
  { name: 'getContactAccounts', args: () => ({ contact_id: 100 }) },
  { name: 'addContactAccount', args: () => ({ contact_id: 100, currency: 'EUR' }), keep: (s, b) => (s.accountId = b.data.id) },
  { name: 'addFundsToContactAccount', args: () => ({ account_id: 500, amount: 250, description: 'Welcome bonus' }) },
  { name: 'withdrawFundsFromContactAccount', args: () => ({ account_id: 500, amount: 100, description: 'Coffee' }) },
  { name: 'deleteContactAccount', args: (s) => ({ account_id: s.accountId }) },
  {
    name: 'getContacts',
    args: () => ({ bot_id: 10 }),
    keep: (s, b) => {
      for (const c of b.data) for (const v of c.variables ?? []) if (v.type === 1) s.shortLink = v.value;
    },
  },
  { name: 'getNumberOfContacts', args: () => ({ bot_id: 10 }) },
  { name: 'createOrUpdateContact', args: () => ({ bot_id: 10, messenger: 'telegram', name: 'Dee', telegram_id: 5009 }) },
  { name: 'getContactVariables', args: () => ({ contact_id: 100 }) },
  { name: 'setContactVariable', args: () => ({ contact_id: 100, name: 'utm_source', value: 'ads' }) },
  { name: 'deleteContactVariable', args: () => ({ contact_id: 100, name: 'utm_source' }) },
  { name: 'getBotTags', args: () => ({ bot_id: 10 }) },
  { name: 'getContactTags', args: () => ({ contact_id: 100 }) },
  { name: 'attachTagToContact', args: () => ({ contact_id: 100, name: 'gold' }) },
  { name: 'detachTagFromContact', args: () => ({ contact_id: 100, name: 'gold' }) },
  { name: 'sendMessage', args: () => ({ contact_id: 100, text: 'Hello' }) },
  { name: 'getReferrers', args: () => ({ contact_id: 101 }) },
  { name: 'getReferrals', args: () => ({ contact_id: 100 }) },
  { name: 'getCountReferrals', args: () => ({ contact_id: 100 }) },
  { name: 'decodeShortLink', args: (s) => ({ url: s.shortLink }) },
  { name: 'exportContacts', args: () => ({ bot_id: 10 }) },
  { name: 'findContacts', args: () => ({ query: 'Ann' }) },
  { name: 'getWorkspace', args: () => ({}) },
  // A plan of no contact: runBulk then has nothing to do and asks nothing.
  {
    name: 'previewBulk',
    args: () => ({ selection: { bot_id: 10, contact_ids: [999_999] }, action: { type: 'attachTag', name: 'gold' } }),
    keep: (s, b: any) => (s.planId = b.data.plan_id),
  },
  { name: 'runBulk', args: (s) => ({ plan_id: s.planId ?? 'none' }) },
];
