/** Rows of a per-contact query (ordered by contact), grouped into one list per contact. */
export function groupByContact<R extends { contact_id: number }, V = R>(
  rows: Iterable<R>,
  value: (row: R) => V = (row) => row as unknown as V,
): Map<number, V[]> {
  const out = new Map<number, V[]>();
  for (const r of rows) {
    const list = out.get(r.contact_id);
    if (list) list.push(value(r));
    else out.set(r.contact_id, [value(r)]);
  }
  return out;
}
