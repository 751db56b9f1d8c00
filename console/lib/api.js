// The console's one way to the API: this gateway's own /api/v1 with a Bearer key. The management
// key lives in sessionStorage so that it ends with the tab.

export const API = "/api/v1";
const STORE = "railgate.managementKey";

export function managementKey() {
  return sessionStorage.getItem(STORE) ?? "";
}

export function rememberKey(key) {
  sessionStorage.setItem(STORE, key);
}

export function forgetKey() {
  sessionStorage.removeItem(STORE);
}

/**
 * The API's refusal as an Error: its own message, verbatim (it names the field and the rule),
 * with the status and the error's metadata (a failing check's names) for the caller to act on.
 */
export async function apiError(res) {
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: show what came
  }
  const said = body?.error?.message ? body.error.message : text || res.statusText;
  const err = new Error(`${res.status}: ${said}`);
  err.status = res.status;
  err.metadata = body?.error?.metadata;
  return err;
}

export async function errorMessage(res) {
  return (await apiError(res)).message;
}

/**
 * A fresh Idempotency-Key. crypto.randomUUID exists only in secure contexts (https, localhost):
 * a console served over plain http elsewhere builds the same 122 random bits itself.
 */
export function newIdempotencyKey() {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Calls the API; resolves to the parsed JSON, or throws an Error carrying the API's message.
 * Every write carries a fresh Idempotency-Key: the gateway applies it once even if the same
 * request reaches it twice.
 */
export async function call(method, path, body, key = managementKey()) {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET") headers["idempotency-key"] = newIdempotencyKey();
  const res = await fetch(`${API}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw await apiError(res);
  return res.json();
}

/** A query string of the set values: `?a=1&b=x`, or "" when none is set. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") q.set(name, String(value));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

/**
 * Every item of an offset-paged list (keys, workspaces, guardrails): the API's pages hold at
 * most 100, so the console asks page after page until it has `total_count` of them (capped, so
 * a runaway count cannot loop forever). The console then searches, sorts and pages them itself.
 */
export async function fetchAll(path, params = {}) {
  const PAGE = 100;
  const MAX_PAGES = 200;
  const out = [];
  for (let i = 0; i < MAX_PAGES; i++) {
    const res = await call(
      "GET",
      `${path}${query({ ...params, limit: PAGE, offset: out.length })}`,
    );
    out.push(...res.data);
    const total = res.total_count ?? out.length;
    if (res.data.length < PAGE || out.length >= total) break;
  }
  return out;
}
