/** Shared facts of the bench's fixed upstream clip and the engine's output format. */
export const SAMPLE_RATE = 24_000;
/** 16-bit mono PCM: bytes per second of audio (what "audio seconds" divide by). */
export const PCM_BYTES_PER_SECOND = SAMPLE_RATE * 2;
export const CLIP_SECONDS = 2;
export const CLIP_BYTES = CLIP_SECONDS * PCM_BYTES_PER_SECOND;
/** Model id of the catalog entry routed to the fake upstream. */
export const UPSTREAM_MODEL = "bench/fixed-clip";
export const MANAGEMENT_KEY = "rg-bench-management-key-0123456789";
