package vllmrace.hunt;

import java.util.List;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.RaceScenario;

/**
 * A program of the hunt, in one of its worlds: {@link HuntProgram} over one EngineCore process (the busy loop, the
 * scheduler, a block pool, a KV connector), {@link FrontendProgram} over AsyncLLM and the EngineCore behind it, {@link ConnectorProgram} over an EngineCore whose
 * connector is a MultiConnector of NIXL (in one of its roles, decode or prefill side) and LMCache-like children. The hunt
 * explores, classifies and shrinks either the same way.
 */
public sealed interface Program permits HuntProgram, FrontendProgram, ConnectorProgram {
    /** A fresh two-actor scenario running this program under {@code fixes}, deployed with {@code configuration}. */
    RaceScenario scenario(FixSet fixes, Configuration configuration);

    /** How big the program is, for shrinking and the throughput table: operations, requests, set-up, options. */
    int size();

    /** Valid programs one step smaller. */
    List<? extends Program> shrinkCandidates();

    /** The candidates that build: one its constructor refuses (IllegalArgumentException) is no program, so no candidate. */
    static <P extends Program> List<P> valid(List<java.util.function.Supplier<P>> candidates) {
        List<P> valid = new java.util.ArrayList<>();
        for (java.util.function.Supplier<P> candidate : candidates) {
            try {
                valid.add(candidate.get());
            } catch (IllegalArgumentException e) {
                // a lost push without its abort, a load without its child, a pool too small: not a candidate
            }
        }
        return valid;
    }
}
