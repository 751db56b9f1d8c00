import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { audioFormatName, audioFormatValue } from "../../domain/audio-formats.js";
import type { RefusalStatus } from "../../domain/enums.js";
import { type RegionName, regionName, regionValue } from "../../domain/enums.js";
import { newGenerationId } from "../../domain/ids.js";
import { ErrorReason, ErrorReasonSchema } from "../../gen/railgate/common/v1/error_info_pb.js";
import {
  type FilterOutcome,
  type Generation,
  GenerationSchema,
  GenerationStatus,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import type { SynthesizeRequest } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import {
  budgetRefusalOf,
  deciderOf,
  guardrailThatDecided,
  markDecidedBy,
  policyThatDecided,
} from "../../governance/decided-by.js";
import type { Principal } from "../../governance/governance-cache.js";
import { governedBy } from "../../governance/policy/governed-by.js";
import { errorInfoOf } from "../../platform/rpc/errors.js";
import { nowTimestamp } from "../../platform/time.js";
import type { SpeechPlan } from "./request.js";
import { routingOf } from "./routing/steps.js";

/** What a record says of the request: the validated plan, or the little known before it. */
type Described = Pick<
  SpeechPlan,
  "characters" | "format" | "sessionId" | "user" | "trace" | "voice" | "speed"
> & {
  model: { id: string };
};

/** A refusal's message in its record is at most this long. */
const MAX_MESSAGE_CHARS = 500;

/** "content_blocked" for ERROR_REASON_CONTENT_BLOCKED; the gRPC code's name when none is given. */
function reasonName(err: ConnectError): string {
  const reason = errorInfoOf(err)?.reason ?? ErrorReason.UNSPECIFIED;
  if (reason !== ErrorReason.UNSPECIFIED) {
    const name = ErrorReasonSchema.values.find((v) => v.number === reason)?.name;
    if (name) return name.replace(/^ERROR_REASON_/, "").toLowerCase();
  }
  return Code[err.code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

/**
 * A refusal's words as its client read them, bounded (a message may quote what the request
 * named). Only a refusal's: an endpoint's failure or an internal error is answered with words
 * of the gateway's own, and its message may name what a client never sees.
 */
function clientMessage(err: ConnectError, status: RefusalStatus): string {
  if (status !== GenerationStatus.REFUSED || isStoreOutage(err)) return "";
  if (err.code === Code.Internal || err.code === Code.Unknown) return "";
  return err.rawMessage.slice(0, MAX_MESSAGE_CHARS);
}

/**
 * A store outage (the 503 a client is told to retry) decided nothing about the request: its
 * record says "unavailable", so outages never count as policy refusals or endpoint failures.
 */
function isStoreOutage(err: ConnectError): boolean {
  return errorInfoOf(err)?.reason === ErrorReason.STORE_UNAVAILABLE;
}

/**
 * The request-log record of a request that produced no audio after its caller and input were
 * known: "refused" (a guardrail's rule, a blocking filter, routing, admission), "failed"
 * (every eligible endpoint failed first) or "unavailable" (the store was not answering); why
 * (the error's reason), which guardrail decided (when one did) and the content-filter outcomes
 * so far. Nothing was served, so nothing was charged. A client that went away (Canceled) was
 * none of them: no record.
 */
export function refusalRecord(
  err: unknown,
  principal: Principal,
  region: RegionName,
  plan: Described,
  outcomes: FilterOutcome[],
  status: RefusalStatus,
): Generation | undefined {
  if (!(err instanceof ConnectError) || err.code === Code.Canceled) return undefined;
  return create(GenerationSchema, {
    id: newGenerationId(),
    model: plan.model.id,
    provider: "",
    characters: plan.characters,
    costUsd: 0,
    format: audioFormatValue(plan.format),
    sessionId: plan.sessionId,
    user: plan.user,
    trace: plan.trace,
    filterOutcomes: outcomes,
    keyHash: principal.key.hash,
    workspaceId: principal.key.workspaceId,
    status: isStoreOutage(err) ? GenerationStatus.UNAVAILABLE : status,
    voice: plan.voice,
    speed: plan.speed,
    dataRegion: regionValue(region),
    governedBy: governedBy(principal.policy),
    refusalReason: reasonName(err),
    refusalMessage: clientMessage(err, status),
    budgetRefusal: budgetRefusalOf(err),
    guardrailId: guardrailThatDecided(err) ?? "",
    policyId: policyThatDecided(err) ?? "",
    // Routing's refusals and the last endpoint's failure carry the endpoints considered.
    routing: routingOf(err),
    createdAt: nowTimestamp(),
  });
}

/** What a record says of a request known only by its unvalidated message: its model and voice, bounded. */
function described(req: SynthesizeRequest): Described {
  return {
    model: { id: req.model.slice(0, 200) },
    characters: 0,
    format: audioFormatName(req.responseFormat) ?? "mp3",
    sessionId: "",
    user: "",
    trace: undefined,
    voice: (req.voice ?? "").slice(0, 200),
    speed: req.speed ?? 1,
  };
}

/**
 * The record of a speech request refused before the service looked at it (the caller-auth
 * interceptor refuses a disabled or expired key, and region rule 1): why, and for a region
 * refusal which guardrail's allowed_data_regions left the region out.
 */
export function callerRefusalRecord(
  principal: Principal,
  region: RegionName,
  req: SynthesizeRequest,
  err: ConnectError,
): Generation | undefined {
  if (errorInfoOf(err)?.reason === ErrorReason.REGION_NOT_ALLOWED) {
    const by = principal.policy.guardrails.find((g) => {
      const allowed = g.guardrail.allowedDataRegions?.values;
      return allowed !== undefined && !allowed.some((r) => regionName(r) === region);
    });
    markDecidedBy(err, by && deciderOf({ guardrailId: by.guardrail.id, policy: by.policy }));
  }
  return refusalRecord(err, principal, region, described(req), [], GenerationStatus.REFUSED);
}

/** The record of a request whose message the service refused (an unknown model, a bad field). */
export function invalidRequestRecord(
  err: unknown,
  principal: Principal,
  region: RegionName,
  req: SynthesizeRequest,
): Generation | undefined {
  return refusalRecord(err, principal, region, described(req), [], GenerationStatus.REFUSED);
}
