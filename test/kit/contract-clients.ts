import { OpenRouter } from "@openrouter/sdk";
import { OpenRouterError, ResponseValidationError } from "@openrouter/sdk/models/errors";
import { AssertionError, expect } from "chai";
import OpenAI from "openai";
import { type SpeechHarness, useSpeechSystem } from "./speech-system.js";
import { MANAGEMENT_KEY } from "./system.js";

/**
 * The contract suite drives a real Railgate (the speech test system: fake upstream providers,
 * a throwaway Redis, every listener) with the official clients, unchanged: @openrouter/sdk
 * 1.3.19 and openai 6.x. Both validate what they receive (the OpenRouter SDK parses every
 * response with its zod schemas), so a response that drifts from the shape a client expects
 * fails here, with the schema's complaint in the message.
 */
export interface ContractHarness {
  speech: SpeechHarness;
  /** The SDK with the management key. */
  admin: OpenRouter;
  /** The SDK with a standard key of the default workspace. */
  user: OpenRouter;
  /** The SDK with any key. */
  sdk(key: string): OpenRouter;
  /** openai's client with the standard key. */
  openai: OpenAI;
  baseUrl: string;
}

export function useContractSystem(): ContractHarness {
  const h = { speech: useSpeechSystem() } as ContractHarness;
  before(() => {
    h.baseUrl = h.speech.baseUrl;
    h.sdk = (key) => new OpenRouter({ apiKey: key, serverURL: `${h.baseUrl}/api/v1` });
    h.admin = h.sdk(MANAGEMENT_KEY);
    h.user = h.sdk(h.speech.key.secret);
    h.openai = new OpenAI({
      apiKey: h.speech.key.secret,
      baseURL: `${h.baseUrl}/api/v1`,
      maxRetries: 0,
    });
  });
  return h;
}

/**
 * Awaits an SDK call; a response the SDK refused as not matching its schema fails the test
 * with the SDK's own account of which fields drifted (and the body it got).
 */
export async function valid<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ResponseValidationError) {
      throw new AssertionError(
        `@openrouter/sdk refused the response: ${err.pretty()}\nbody: ${err.body.slice(0, 2000)}`,
      );
    }
    throw err;
  }
}

/**
 * The SDK call fails with an HTTP error of `status` (or one of them) whose body the SDK parsed as its error
 * shape (`{ error: { code, message } }`); the message matches `message` when given.
 */
export async function refused(
  call: Promise<unknown>,
  status: number | number[],
  message?: RegExp,
): Promise<OpenRouterError> {
  let caught: unknown;
  try {
    await call;
  } catch (err) {
    caught = err;
  }
  if (caught instanceof ResponseValidationError) {
    throw new AssertionError(`@openrouter/sdk refused the error body: ${caught.pretty()}`);
  }
  expect(caught, "the call should have failed").to.be.instanceOf(OpenRouterError);
  const err = caught as OpenRouterError;
  expect(err.statusCode, err.body).to.be.oneOf(Array.isArray(status) ? status : [status]);
  const body = JSON.parse(err.body);
  expect(body.error.code).to.equal(err.statusCode);
  if (message) expect(body.error.message).to.match(message);
  return err;
}

/** Every byte of a web stream. */
export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

let names = 0;
/** A name no other test uses. */
export function unique(prefix: string): string {
  return `${prefix} ${process.pid}-${++names}`;
}
