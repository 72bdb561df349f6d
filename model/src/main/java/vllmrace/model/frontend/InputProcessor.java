package vllmrace.model.frontend;

import vllmrace.model.deploy.ConfigSwitch;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * {@code InputProcessor.assign_request_id} ({@code vllm/v1/engine/input_processor.py}, commit in {@link UpstreamPin}): the
 * engine's request id for a client's request. Used by {@link AsyncLlm} and by the scenarios that stand in for the
 * frontend in front of one EngineCore process, so {@link Fix#UNIQUE_INTERNAL_IDS} and the deployment's id randomization
 * are read in one place.
 */
public final class InputProcessor {
    private InputProcessor() {
    }

    /**
     * With {@link Fix#UNIQUE_INTERNAL_IDS} (#27987) the external id plus a suffix unique to this ADD ({@code ordinal}, a
     * deterministic counter standing for upstream's random uuid), else the external id itself; also the external id
     * when the deployment sets {@code VLLM_DISABLE_REQUEST_ID_RANDOMIZATION=1}
     * ({@link ConfigSwitch#REQUEST_ID_RANDOMIZATION_DISABLED}, #34415: {@code request.request_id = request.external_req_id}).
     */
    public static String assignRequestId(FixSet fixes, Configuration configuration, String externalReqId, long ordinal) {
        UpstreamPins.enter(UpstreamPin.INPUT_PROCESSOR_ASSIGN_REQUEST_ID);
        boolean randomized = fixes.isOn(Fix.UNIQUE_INTERNAL_IDS)
                && !configuration.isOn(ConfigSwitch.REQUEST_ID_RANDOMIZATION_DISABLED);
        return randomized ? externalReqId + "-" + ordinal : externalReqId;
    }
}
