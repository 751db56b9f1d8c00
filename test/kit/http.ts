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

/** A speech answer: raw bytes, plus the parsed body when it is JSON (errors). */
export interface SpeechResponse extends JsonResponse {
  bytes: Buffer;
}

/** POST /api/v1/audio/speech with `key` (null sends no Authorization header). */
export async function postSpeech(
  baseUrl: string,
  key: string | null,
  body: unknown,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<SpeechResponse> {
  const headers: Record<string, string> = { "content-type": "application/json", ...init.headers };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${baseUrl}/api/v1/audio/speech`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: init.signal,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let parsed: unknown;
  if (res.headers.get("content-type")?.startsWith("application/json")) {
    parsed = JSON.parse(bytes.toString("utf8"));
  }
  return { status: res.status, headers: res.headers, body: parsed, bytes };
}
