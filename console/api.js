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
