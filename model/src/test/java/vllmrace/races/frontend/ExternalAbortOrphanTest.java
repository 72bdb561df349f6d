package vllmrace.races.frontend;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.model.asyncio.YieldCondition;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.FixSet;
import vllmrace.races.AllInterleavings;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;

/**
 * Issue 24's question, answered by the model: an abort by external id cannot orphan a re-add on any profile of vLLM main
 * under any yield condition vLLM can produce, nor under input-socket back-pressure; only an await inserted before the
 * send opens the window, which shows the scenario can see the orphan at all.
 */
class ExternalAbortOrphanTest {
    static final List<Params> POINTS = FrontendYields.QUESTION_POINTS;

    static Map<RaceOutcome, Integer> outcomes(FixSet fixes, Configuration config, Params point) {
        return AllInterleavings.outcomes(() -> new ExternalAbortOrphansReaddScenario(fixes, config, point));
    }

    private static boolean orphans(Map<RaceOutcome, Integer> outcomes) {
        assertFalse(outcomes.isEmpty(), "nothing ran");
        assertTrue(outcomes.keySet().stream().noneMatch(RaceOutcome::modellingError), "a modelling error: " + outcomes);
        return outcomes.containsKey(ExternalAbortOrphansReaddScenario.Outcome.ORPHANED_READD);
    }

    @Test
    void noProfileOfVllmMainOrphansTheReadd() {
        for (Profile profile : Profile.values()) {
            for (Params point : POINTS) {
                Map<RaceOutcome, Integer> outcomes = outcomes(profile.fixes(), profile.configuration(), point);
                assertFalse(orphans(outcomes), profile.label() + " at " + point + ": " + outcomes);
            }
        }
    }

    @Test
    void backPressureDoesNotOpenItTheSendsPlaceIsFixedByTheCall() {
        for (Profile profile : Profile.values()) {
            Configuration config = profile.configuration().withYields(EnumSet.complementOf(EnumSet.of(YieldCondition.AWAIT_INSERTED_BEFORE_SEND)));
            for (Params point : POINTS) {
                Map<RaceOutcome, Integer> outcomes = outcomes(profile.fixes(), config, point);
                assertFalse(orphans(outcomes), profile.label() + " under every other condition at " + point + ": " + outcomes);
            }
        }
    }

    @Test
    void onlyAnAwaitBeforeTheSendOpensIt() {
        Configuration inserted = Configuration.DEFAULT.withYields(Set.of(YieldCondition.AWAIT_INSERTED_BEFORE_SEND));
        assertTrue(orphans(outcomes(FixSet.all(), inserted, Params.DEFAULT)), "every fix on, an await inserted before the send");
    }
}
