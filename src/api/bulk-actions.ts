/**
 * The contract of the MCP server's bulk tools and of the Bulk plan view: a plan's action, as
 * previewBulk takes it, and what a plan does in the person's words. runBulk's question and
 * refusals (src/mcp/composite/bulk-confirm.ts) and the Bulk plan card (views/bulk.ts) say it with
 * the one function here. The views bundle this file for the browser: it imports nothing.
 */

/** The actions a plan may take. */
export const ACTION_TYPES = ['deposit', 'withdraw', 'attachTag', 'detachTag', 'setVariable', 'sendMessage'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

/** A plan's action, checked. */
export interface BulkAction {
  type: ActionType;
  currency?: string;
  amount?: number;
  description?: string;
  name?: string;
  value?: string;
  text?: string;
  image?: string;
  file?: string;
}

/** How the words are said. */
interface WordsOptions {
  /** Minor units of a currency as the person reads them: "12.34 USD". */
  money: (minor: number, currency: string) => string;
  /**
   * The whole sentence (a question, a refusal): which accounts, the total and description, the
   * message, and that it cannot be taken back. Else the card's headline, which shows those apart.
   */
  whole: boolean;
  /** A money plan's total, in the whole sentence. */
  total?: number;
}

/** What a plan of `count` contacts does, in the person's words. */
export function planWords(a: BulkAction, count: number, o: WordsOptions): string {
  const people = `${count} ${count === 1 ? 'contact' : 'contacts'}`;
  const end = o.whole ? '.' : '';
  switch (a.type) {
    case 'deposit':
    case 'withdraw': {
      const verb = a.type === 'deposit' ? 'Top up' : 'Debit';
      const each = `by ${o.money(a.amount!, a.currency!)} each`;
      if (!o.whole) return `${verb} ${people} ${each}`;
      const total = o.total === undefined ? '' : `: ${o.money(o.total, a.currency!)} in all`;
      return `${verb} the ${a.currency} accounts of ${people} ${each}${total} ("${a.description}").`;
    }
    case 'sendMessage': {
      const to = `Send a message to ${count} ${count === 1 ? 'person' : 'people'}`;
      if (!o.whole) return to;
      const what = `${a.text ? `: "${a.text.slice(0, 200)}"` : ''}${a.image ? ' (with an image)' : ''}${a.file ? ' (with a file)' : ''}`;
      return `${to}${what}. It cannot be taken back.`;
    }
    case 'attachTag':
      return `Tag ${people} "${a.name}"${end}`;
    case 'detachTag':
      return `Remove the tag "${a.name}" from ${people}${end}`;
    case 'setVariable':
      return `Set the variable "${a.name}" of ${people} to "${a.value!.slice(0, 200)}"${end}`;
  }
}
