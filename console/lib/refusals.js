// Refusal reasons as the request log names them, in words: the log's reason filter and the
// dashboard's refusal counts read them from here.

export const REFUSAL_REASONS = [
  ["budget_exceeded", "Budget used up"],
  ["rate_limited", "Rate limit"],
  ["key_limit_exceeded", "Key limit"],
  ["insufficient_credits", "Out of credits"],
  ["content_blocked", "Blocked content"],
  ["prompt_injection_blocked", "Prompt injection"],
  ["model_not_allowed", "Model not allowed"],
  ["model_not_found", "Unknown model"],
  ["region_not_allowed", "Region not allowed"],
  ["no_allowed_endpoint", "No allowed endpoint"],
  ["no_capable_endpoint", "No capable endpoint"],
  ["api_key_disabled", "Key disabled"],
  ["api_key_expired", "Key expired"],
  ["invalid_argument", "Invalid request"],
];

const WORDS = new Map(REFUSAL_REASONS);

/** "Budget used up" for "budget_exceeded"; a reason without words of its own reads as itself. */
export function refusalWords(reason) {
  return WORDS.get(reason) ?? reason.replace(/_/g, " ");
}
