package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import vllmrace.model.sched.Request;

/**
 * Two family axes every race's grid must have, each checked on what the model did at the fixed variant, not on the
 * grid's names. <b>Multi-token:</b> a point where a request produces more than one output token. A story
 * told with one-token requests only never reaches the paths that depend on a request running on after its first
 * token (a second step, a placeholder still owed, a stop token before the length cap), so a fix that breaks only
 * those would pass every cell. Checked on what the model did, not on the grid's names: every schedule of the fixed
 * variant at every point is run, and what each request did with its tokens is read off the scheduler's requests: some
 * request must sample a token after which it still has tokens to go (it is not finished by it). A race whose fixed runs
 * sample no token at all (its request never reaches a step) has no such path and is exempt, by the same measurement. <b>Id reuse:</b> a point where two requests reach EngineCore under one client id (the
 * frontend's re-adds, or a rig story's {@code priorUse}), so per-id records that outlive a request are exercised.
 */
class FamilyAxesTest {

    /** What the requests of a run did with their tokens: none sampled, each sampled only its last, or some sampled one with more to go. */
    enum TokenPath { NONE, LAST_TOKENS_ONLY, TOKENS_TO_GO }

    /**
     * Races whose story is about a request's last step, with a pool sized to the story: a token with more to go needs a
     * block the pool does not have, or moves the last step out of the actors' iterations (the race is then not in the
     * story at all). Each is checked to be still one-token-only, so an exemption cannot outlive its reason.
     */
    static final Map<Race, String> LAST_STEP_STORIES = Map.of(
            Race.AbortLosesToFinalStep, "the abort races R's final step; at max_tokens 2 that step is outside the busy loop's one iteration",
            Race.AbortedLoadFreesBlocks, "R never runs (aborted while loading); R2's prompt fills the pool, a decode token needs a block more",
            Race.ExtraAsyncSavesDedup, "a one-block pool: R's second token needs a second block",
            Race.LateLoadCompletionUnion, "the pool is R's prompt (one token short with stopToken); R2's prompt fills it",
            Race.PullIntoFreedBlocks, "LateLoadCompletionUnion's run",
            Race.SkippedWaitingAdmissionDeadlock, "the pool is sized so A cannot be allocated while B holds its blocks; a decode block more changes that",
            Race.AsyncFreeUnderInFlightStep, "a one-block pool; R stops at its first token by design: the race is the step dispatched past it");

    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void someGridPointRunsARequestPastItsFirstToken(Race race) {
        TokenPath most = TokenPath.NONE;
        List<String> perPoint = new ArrayList<>();
        for (Params point : race.grid()) {
            TokenPath atPoint = TokenPath.NONE;
            for (RaceScenario run : fixedRuns(race, point)) {
                atPoint = max(atPoint, tokenPath(run, point));
            }
            perPoint.add(point + ": " + atPoint);
            most = max(most, atPoint);
        }
        if (LAST_STEP_STORIES.containsKey(race)) {
            assertTrue(most == TokenPath.LAST_TOKENS_ONLY, race + " is exempt (" + LAST_STEP_STORIES.get(race) + ") but now reaches "
                    + most + ": drop the exemption");
            return;
        }
        assertTrue(most != TokenPath.LAST_TOKENS_ONLY, race + "'s fixed runs sample only final tokens at every grid point ("
                + perPoint + "): give its family a point where a request samples a token with more to go");
    }

    private static TokenPath max(TokenPath a, TokenPath b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    /**
     * The story's requests only: a {@code priorUse} point's first request is set-up. A token "with more to go" is one
     * after which the request was not finished by it: it has sampled two, or one short of its length cap and its stop token.
     */
    static TokenPath tokenPath(RaceScenario run, Params point) {
        List<Request> added = ((TwoActorScenario) run).system().scheduler().addedSnapshot();
        List<Request> story = point.get(RigScenario.PRIOR_USE, 0, 0) == 1 ? added.subList(1, added.size()) : added;
        TokenPath path = TokenPath.NONE;
        for (Request r : story) {
            int n = r.numOutputTokens();
            if (n >= 2 || (n == 1 && r.maxTokens() > 1 && r.stopTokenAt() != 1)) {
                return TokenPath.TOKENS_TO_GO;
            }
            if (n == 1) {
                path = TokenPath.LAST_TOKENS_ONLY;
            }
        }
        return path;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void someGridPointReusesAClientId(Race race) {
        boolean reused = false;
        for (Params point : race.grid()) {
            for (RaceScenario run : fixedRuns(race, point)) {
                java.util.Set<String> clientIds = new java.util.HashSet<>();
                for (Request request : ((TwoActorScenario) run).system().scheduler().addedSnapshot()) {
                    reused |= !clientIds.add(request.requestId().replaceFirst("-\\d+$", ""));
                }
            }
        }
        assertTrue(reused, race + ": no grid point sends two requests under one client id: give its family an id-reuse point");
    }

    /** Every schedule of the fixed variant at {@code point}, each run to its judgement. */
    static List<RaceScenario> fixedRuns(Race race, Params point) {
        List<RaceScenario> runs = new ArrayList<>();
        AllInterleavings.bySchedule(() -> {
            RaceScenario scenario = race.scenario(race.fixes(Variant.FIXED), point);
            runs.add(scenario);
            return scenario;
        });
        return runs;
    }

}
