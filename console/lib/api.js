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

/** The API's own message, verbatim: it names the field and the rule. */
export async function errorMessage(res) {
  const text = await res.text();
  try {
    const body = JSON.parse(text);
    if (body?.error?.message) return `${res.status}: ${body.error.message}`;
  } catch {
    // not JSON: show what came
  }
  return `${res.status}: ${text || res.statusText}`;
}

/** Calls the API; resolves to the parsed JSON, or throws an Error carrying the API's message. */
export async function call(method, path, body, key = managementKey()) {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${API}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(await errorMessage(res));
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
