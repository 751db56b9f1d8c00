import { type IncomingMessage, request } from "node:http";

/** A speech response held open by the test: read its first bytes, then pause, resume or cut it. */
export interface HeldStream {
  status: number;
  generationId: string;
  response: IncomingMessage;
  /** Bytes received so far. */
  bytes(): number;
  /** Reads on until the response ends: true when it ended whole, false when it was cut. */
  finish(): Promise<boolean>;
  /** The client goes away. */
  abort(): void;
}

/**
 * POSTs /api/v1/audio/speech and resolves once the first audio bytes arrived,
 * with the response paused: nothing more is read until `finish()`, so the
 * stream stays in flight on the server (backpressure) as long as the test wants.
 */
export function holdSpeech(baseUrl: string, key: string, body: unknown): Promise<HeldStream> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/api/v1/audio/speech`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(payload),
      },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      if (res.statusCode !== 200) {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => reject(new Error(`speech answered ${res.statusCode}: ${text}`)));
        return;
      }
      let received = 0;
      let ended: boolean | undefined;
      const waiters: ((whole: boolean) => void)[] = [];
      const end = (whole: boolean) => {
        if (ended !== undefined) return;
        ended = whole;
        for (const w of waiters) w(whole);
      };
      res.on("end", () => end(res.complete));
      res.on("aborted", () => end(false));
      res.on("error", () => end(false));
      res.on("close", () => end(res.complete));
      res.once("data", (chunk: Buffer) => {
        received += chunk.byteLength;
        res.pause();
        res.on("data", (c: Buffer) => {
          received += c.byteLength;
        });
        resolve({
          status: res.statusCode ?? 0,
          generationId: String(res.headers["x-generation-id"] ?? ""),
          response: res,
          bytes: () => received,
          finish: () => {
            const done = new Promise<boolean>((r) =>
              ended === undefined ? waiters.push(r) : r(ended),
            );
            res.resume();
            return done;
          },
          abort: () => req.destroy(),
        });
      });
    });
    req.end(payload);
  });
}

/** A long English input of about `characters` characters (whole sentences). */
export function longInput(characters: number): string {
  const sentence = "The quick brown fox jumps over the lazy dog near the quiet river bank. ";
  return sentence
    .repeat(Math.ceil(characters / sentence.length))
    .slice(0, characters)
    .trim();
}
