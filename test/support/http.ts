export interface JsonResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON shapes
  body: any;
}

/** A small HTTP client for gateway tests: real HTTP over loopback. */
export class Api {
  constructor(
    private readonly baseUrl: string,
    private readonly key?: string,
  ) {}

  withKey(key: string | undefined): Api {
    return new Api(this.baseUrl, key);
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    init: { headers?: Record<string, string>; raw?: string } = {},
  ): Promise<JsonResponse> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    let payload: string | undefined = init.raw;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text so the assertion shows it
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  get(path: string) {
    return this.request("GET", path);
  }
  post(path: string, body?: unknown) {
    return this.request("POST", path, body);
  }
  patch(path: string, body?: unknown) {
    return this.request("PATCH", path, body);
  }
  delete(path: string) {
    return this.request("DELETE", path);
  }
}
