// The console's only way to the server: fetch with the admin token as a
// bearer token (kept in sessionStorage, never in a cookie).

import { answered, unreachable, suspect } from './health.js';

const KEY = 'roost.adminToken';
const SLOW_MS = 5000;

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (value) => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, code, description, headers, body) {
    super(description || code || ('HTTP ' + status));
    this.status = status;
    this.code = code;
    this.headers = headers;
    this.body = body || {}; // the whole JSON error, e.g. a SchemaViolation's `violations`
  }
}

let refused = () => {};

/** Called when the server refuses the token: the app shows the sign-in page. */
export function onRefused(handler) { refused = handler; }

/**
 * Sends a request. `json` is sent as a JSON body, `form` (FormData) as
 * multipart, `bytes` (a Blob/File) as is. Resolves to `{status, headers, data}` (data parsed from JSON), or to
 * the Response itself with `raw: true`; rejects with an ApiError.
 */
export async function api(method, path, { json, bytes, form, headers = {}, raw = false } = {}) {
  const all = { Accept: 'application/json', ...headers };
  const t = token.get();
  if (t) all.Authorization = 'Bearer ' + t;
  let body;
  if (json !== undefined) {
    body = JSON.stringify(json);
    all['Content-Type'] = 'application/json';
  } else if (form !== undefined) {
    body = form; // multipart/form-data; fetch writes the boundary
  } else if (bytes !== undefined) {
    body = bytes;
    all['Content-Type'] = bytes.type || 'application/octet-stream';
  }
  // A request still unanswered after SLOW_MS has roostd probed (a stopped daemon accepts but never answers).
  const slow = setTimeout(suspect, SLOW_MS);
  let response;
  try {
    response = await fetch(path, { method, headers: all, body, cache: 'no-store', credentials: 'omit' });
  } catch (e) {
    if (e instanceof TypeError) {
      unreachable();
      throw new ApiError(0, 'Unreachable', 'roostd is not answering');
    }
    throw e;
  } finally {
    clearTimeout(slow);
  }
  answered();
  if (!response.ok) {
    let error = {};
    try { error = await response.json(); } catch { /* not JSON */ }
    if (response.status === 401 || (response.status === 403 && path.startsWith('/admin/'))) refused(response.status);
    throw new ApiError(response.status, error.error, error.description, response.headers, error);
  }
  if (raw) return response;
  const text = await response.text();
  return { status: response.status, headers: response.headers, data: text ? JSON.parse(text) : null };
}

export async function get(path) { return (await api('GET', path)).data; }

/** A query string from an object, leaving out empty values. */
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const text = q.toString();
  return text ? '?' + text : '';
}

/** A path segment. */
export const seg = (value) => encodeURIComponent(value);
