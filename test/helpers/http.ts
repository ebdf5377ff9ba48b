/**
 * The suite's one HTTP client for the Workspace API: a call as a script would make it (bearer
 * key, JSON or form body, GET query in PHP's bracket form), answered as status, headers, raw
 * text and parsed body. Used on in-process worlds and on spawned `serve` processes alike.
 */
import qs from 'qs';

export interface CallOptions {
  /** The bearer key; null sends no Authorization header. Default alice-key. */
  key?: string | null;
  verb?: string;
  /** Send params as form fields (POST) instead of JSON. */
  form?: boolean;
  /** Send params as multipart form data (POST); keys are sent as given (`fields[0][name]`). */
  multipart?: boolean;
  headers?: Record<string, string>;
  /** Raw body, text or bytes (overrides params for POST). */
  rawBody?: string | Uint8Array;
  /** Raw query string (overrides params for GET). */
  rawQuery?: string;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** Call `method` at `baseUrl` (ending in /api/v1). GET and HEAD put params in the query. */
export async function callApi(
  baseUrl: string,
  method: string,
  params: Record<string, unknown> = {},
  o: CallOptions = {},
): Promise<CallResult> {
  const verb = o.verb ?? 'POST';
  const headers: Record<string, string> = { Accept: 'application/json', ...o.headers };
  const key = o.key === undefined ? 'alice-key' : o.key;
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  let url = `${baseUrl}/${method}`;
  let body: string | Uint8Array | FormData | undefined;
  if (verb === 'GET' || verb === 'HEAD') {
    const q = o.rawQuery ?? qs.stringify(params, { encodeValuesOnly: true });
    if (q) url += `?${q}`;
  } else if (o.rawBody !== undefined) {
    headers['Content-Type'] ??= 'application/json';
    body = o.rawBody;
  } else if (o.multipart) {
    const form = new FormData();
    for (const [k, v] of Object.entries(params)) form.append(k, String(v));
    body = form;
  } else if (o.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = qs.stringify(params, { encodeValuesOnly: true });
  } else {
    headers['Content-Type'] ??= 'application/json';
    body = JSON.stringify(params);
  }
  const res = await fetch(url, { method: verb, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}
