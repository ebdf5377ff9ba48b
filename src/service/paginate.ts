/**
 * Laravel's length-aware paginator answer: `data`, `links`, `meta`, with `meta.links` built
 * by its URL window (3 pages each side, `...` gaps).
 */
interface PageLink {
  url: string | null;
  label: string;
  active: boolean;
}

export interface PageEnvelope<T> {
  data: T[];
  links: { first: string; last: string; prev: string | null; next: string | null };
  meta: {
    current_page: number;
    from: number | null;
    last_page: number;
    links?: PageLink[];
    path: string;
    per_page: number;
    to: number | null;
    total: number;
  };
}

/** A `page` parameter as Laravel reads it: anything but a positive integer is page 1. */
export function pageNumber(raw: unknown): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) && n >= 1 ? n : 1;
}

function range(a: number, b: number): number[] {
  const out: number[] = [];
  for (let i = a; i <= b; i++) out.push(i);
  return out;
}

/** The pages Laravel's UrlWindow shows, with '...' for gaps. */
function windowElements(current: number, last: number): Array<number[] | '...'> {
  const onEachSide = 3;
  if (last < onEachSide * 2 + 8) return [range(1, last)];
  const window = onEachSide + 4;
  const start = range(1, 2);
  const finish = range(last - 1, last);
  if (current <= window) return [range(1, window + onEachSide), '...', finish];
  if (current > last - window) return [start, '...', range(last - (window + (onEachSide - 1)), last)];
  return [start, '...', range(current - onEachSide, current + onEachSide), '...', finish];
}

export function paginate<T>(opts: {
  items: T[];
  total: number;
  page: number;
  perPage: number;
  path: string;
  metaLinks: boolean;
}): PageEnvelope<T> {
  const { items, total, page, perPage, path } = opts;
  const url = (p: number) => `${path}?page=${p}`;
  const lastPage = Math.max(Math.ceil(total / perPage), 1);
  const from = items.length > 0 ? (page - 1) * perPage + 1 : null;
  const to = from !== null ? from + items.length - 1 : null;
  const prev = page > 1 ? url(page - 1) : null;
  const next = page < lastPage ? url(page + 1) : null;
  const meta: PageEnvelope<T>['meta'] = { current_page: page, from, last_page: lastPage, path, per_page: perPage, to, total };
  if (opts.metaLinks) {
    const links: PageLink[] = [{ url: prev, label: '&laquo; Previous', active: false }];
    for (const el of windowElements(page, lastPage)) {
      if (el === '...') links.push({ url: null, label: '...', active: false });
      else for (const p of el) links.push({ url: url(p), label: String(p), active: p === page });
    }
    links.push({ url: next, label: 'Next &raquo;', active: false });
    return {
      data: items,
      links: { first: url(1), last: url(lastPage), prev, next },
      meta: { current_page: page, from, last_page: lastPage, links, path, per_page: perPage, to, total },
    };
  }
  return { data: items, links: { first: url(1), last: url(lastPage), prev, next }, meta };
}
