import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorReason, ErrorReasonSchema } from "../../gen/railgate/common/v1/error_info_pb.js";
import {
  type FilterOutcome,
  type Generation,
  GenerationSchema,
  GenerationStatus,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import type { SynthesizeRequest } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { guardrailThatDecided, markDecidedBy } from "../../governance/decided-by.js";
import type { Principal } from "../../governance/governance-cache.js";
import { governedBy } from "../../governance/policy/governed-by.js";
import { audioFormatName, audioFormatValue } from "../../platform/audio-formats.js";
import { errorInfoOf, permissionDenied } from "../../platform/errors.js";
import type { RefusalStatus } from "../../platform/generation-statuses.js";
import { newGenerationId } from "../../platform/ids.js";
import { type RegionName, regionName, regionValue } from "../../platform/regions.js";
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
    guardrailId: guardrailThatDecided(err) ?? "",
    // Routing's refusals and the last endpoint's failure carry the endpoints considered.
    routing: routingOf(err),
    createdAt: nowTimestamp(),
  });
}

/**
 * The record of a speech request refused by region rule 1 (the caller-auth interceptor refuses
 * it before the service sees it): which guardrail's allowed_data_regions left the region out,
 * and the little the unvalidated request says (its model and voice, bounded).
 */
export function regionRefusalRecord(
  principal: Principal,
  region: RegionName,
  req: SynthesizeRequest,
): Generation | undefined {
  const by = principal.policy.guardrails.find((g) => {
    const allowed = g.guardrail.allowedDataRegions?.values;
    return allowed !== undefined && !allowed.some((r) => regionName(r) === region);
  });
  const err = markDecidedBy(
    permissionDenied(ErrorReason.REGION_NOT_ALLOWED, "region not allowed"),
    by?.guardrail.id,
  );
  return refusalRecord(
    err,
    principal,
    region,
    {
      model: { id: req.model.slice(0, 200) },
      characters: 0,
      format: audioFormatName(req.responseFormat) ?? "mp3",
      sessionId: "",
      user: "",
      trace: undefined,
      voice: (req.voice ?? "").slice(0, 200),
      speed: req.speed ?? 1,
    },
    [],
    GenerationStatus.REFUSED,
  );
}
