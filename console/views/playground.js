// The speech playground (a standard key, no sign-in): text, a model and one of its voices from
// GET /api/v1/models, a format; it plays mp3 as it arrives. And a generation looked up by id.

import { API, call, errorMessage, managementKey } from "../lib/api.js";
import { $, options } from "../lib/dom.js";

/** The speech models as the catalogue lists them, each with its voices. */
let models = [];

/** The chosen model's voices, by name (with languages), the first one chosen. */
function fillVoices() {
  const model = models.find((m) => m.id === $("p-model").value);
  const voices = model?.voices ?? [];
  options(
    $("p-voice"),
    voices,
    (v) => v.id,
    (v) => (v.languages?.length ? `${v.name || v.id} (${v.languages.join(", ")})` : v.name || v.id),
  );
  // The reader's own language first (the browser's), else its family ("en" for "en-GB").
  const lang = navigator.language.toLowerCase();
  const speaks = (v, test) => (v.languages ?? []).some((l) => test(l.toLowerCase()));
  const mine =
    voices.find((v) => speaks(v, (l) => l === lang)) ??
    voices.find((v) => speaks(v, (l) => l.split("-")[0] === lang.split("-")[0]));
  if (mine) $("p-voice").value = mine.id;
}

/** Loads the speech models; resolves to them (the request log's model filter uses them too). */
export async function loadModels() {
  try {
    const res = await fetch(`${API}/models?output_modalities=speech`);
    if (!res.ok) throw new Error(await errorMessage(res));
    models = (await res.json()).data;
    options(
      $("p-model"),
      models,
      (m) => m.id,
      (m) => m.name || m.id,
    );
    fillVoices();
  } catch (err) {
    $("speak-error").textContent = `Models: ${err.message}`;
  }
  return models;
}

let received = 0;
/** How this answer is played, said in the result so a listener knows what to expect. */
let mode = "";

function progress(done) {
  $("speak-result").textContent = done
    ? `Done: received ${received} bytes of audio (${mode}).`
    : `Receiving: ${received} bytes of audio (${mode}).`;
}

/** mp3 through MediaSource: playback starts with the first chunk, not at the end. */
function playStreaming(audio, reader) {
  const media = new MediaSource();
  audio.src = URL.createObjectURL(media);
  return new Promise((resolve, reject) => {
    media.addEventListener(
      "sourceopen",
      async () => {
        try {
          const buffer = media.addSourceBuffer("audio/mpeg");
          const appended = () =>
            new Promise((r) => buffer.addEventListener("updateend", r, { once: true }));
          audio.play().catch(() => {
            // autoplay may be refused; the controls are there to press play
          });
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            received += value.byteLength;
            progress(false);
            buffer.appendBuffer(value);
            await appended();
          }
          media.endOfStream();
          resolve();
        } catch (err) {
          reject(err);
        }
      },
      { once: true },
    );
  });
}

/** Other formats, or no MediaSource for mp3: collect the stream, then play it. */
async function playCollected(audio, reader, type) {
  const chunks = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.byteLength;
    progress(false);
  }
  audio.src = URL.createObjectURL(new Blob(chunks, { type }));
  await audio.play().catch(() => {
    // autoplay may be refused; the controls are there to press play
  });
}

async function speak(event) {
  event.preventDefault();
  $("speak-error").textContent = "";
  $("speak-result").textContent = "Requesting…";
  received = 0;
  const format = $("p-format").value;
  try {
    const res = await fetch(`${API}/audio/speech`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${$("p-key").value}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        model: $("p-model").value,
        voice: $("p-voice").value,
        input: $("p-text").value,
        response_format: format,
      }),
    });
    if (!res.ok) {
      $("speak-result").textContent = "";
      $("speak-error").textContent = await errorMessage(res);
      return;
    }
    const generation = res.headers.get("x-generation-id");
    if (generation) {
      $("generation-id").value = generation;
      sayRedactions(generation, $("p-key").value);
    }
    const audio = $("p-audio");
    const reader = res.body.getReader();
    const streaming =
      format === "mp3" && "MediaSource" in window && MediaSource.isTypeSupported("audio/mpeg");
    mode = streaming ? "played as it arrived" : "played when complete";
    if (streaming) await playStreaming(audio, reader);
    else await playCollected(audio, reader, res.headers.get("content-type") ?? "audio/wav");
    progress(true);
  } catch (err) {
    $("speak-error").textContent = `Playback failed: ${err.message}`;
  }
}

/**
 * What the guardrails changed in the text before it was spoken, read from the request's record
 * (written off the hot path: asked a few times). Said beside the audio, or that nothing was.
 */
async function sayRedactions(id, key) {
  const line = $("speak-redactions");
  line.textContent = "";
  // The key's own list, newest first: it answers 200 while the record is not in yet, where the
  // record's own address would answer 404 (a failed load in the browser's console).
  for (let i = 0; i < 10; i++) {
    const res = await fetch(`${API}/generations?limit=20`, {
      headers: { authorization: `Bearer ${key}` },
    });
    if (!res.ok) return;
    const record = (await res.json()).data.find((g) => g.id === id);
    if (record) {
      const redacted = (record.guardrail_outcomes ?? []).filter((o) => o.action === "redact");
      line.textContent =
        redacted.length === 0
          ? "Nothing in the text was redacted."
          : `Redacted before speaking: ${redacted
              .map((o) => `${o.slug}${o.count > 1 ? ` ×${o.count}` : ""}`)
              .join(", ")}.`;
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

async function lookUpGeneration(event) {
  event.preventDefault();
  const id = $("generation-id").value.trim();
  try {
    const res = await call(
      "GET",
      `/generation?id=${encodeURIComponent(id)}`,
      undefined,
      // The management key reads any workspace's records: it serves when no standard key is typed.
      $("p-key").value || managementKey(),
    );
    $("generation-out").textContent = JSON.stringify(res, null, 2);
  } catch (err) {
    $("generation-out").textContent = err.message;
  }
}

export function setupPlayground() {
  $("p-model").addEventListener("change", fillVoices);
  $("speak-form").addEventListener("submit", speak);
  $("generation-form").addEventListener("submit", lookUpGeneration);
}
