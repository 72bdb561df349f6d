package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import vllmrace.model.detect.ViolationKind;

/**
 * The one judge ({@link RaceScenario#judge()}): a run is the race only with exactly the detectors its outcome declares,
 * and clean only with none (beyond what a clean outcome declares it tolerates, with its reason).
 */
class JudgeTest {

    /** Every outcome says what it accepts: a violating one its detectors (and a cascade only with a reason). */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void everyOutcomeDeclaresTheDetectorsItStandsOn(Race race) throws NoSuchFieldException {
        for (RaceOutcome outcome : race.outcomes()) {
            Enum<?> constant = (Enum<?>) outcome;
            java.lang.reflect.Field f = constant.getDeclaringClass().getField(constant.name());
            Violating v = f.getAnnotation(Violating.class);
            if (v != null) {
                assertTrue(v.detectors().length > 0, race + "." + constant + " declares no detector");
                assertFalse(v.anyDetector(), race + "." + constant + ": anyDetector is the hunt's, never a race's");
                assertEquals(v.cascade().length > 0, !v.cascadeWhy().isBlank(), race + "." + constant + ": a cascade needs its reason");
                assertTrue(Arrays.stream(v.cascade()).noneMatch(Arrays.asList(v.detectors())::contains), race + "." + constant);
            }
            Clean c = f.getAnnotation(Clean.class);
            if (c != null) {
                assertEquals(c.tolerates().length > 0, !c.toleratesWhy().isBlank(), race + "." + constant + ": say whose detectors");
            }
        }
    }

    /** No race classifies its runs its own way: the shared arbiter picks the violating outcome; a scenario only settles and reads its clean endings. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void everyScenarioLeavesTheArbiterToTheBase(Race race) {
        Class<?> scenario = race.scenarioClass();
        assertTrue(TwoActorScenario.class.isAssignableFrom(scenario), scenario + " does not extend TwoActorScenario");
        assertTrue(java.util.Arrays.stream(scenario.getDeclaredMethods()).noneMatch(m -> m.getName().equals("arbiter")),
                scenario + " declares its own arbiter()");
    }

    /** Every clean outcome is reachable by a declared ending, and every ending names one of the race's clean outcomes. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void everyCleanOutcomeHasADeclaredEnding(Race race) {
        for (Variant variant : new Variant[] {Variant.REPORTED, Variant.FIXED}) {
            if (race.expected(variant) == Expectation.NOT_APPLICABLE) {
                continue;
            }
            TwoActorScenario scenario = (TwoActorScenario) race.scenario(variant);
            java.util.Set<RaceOutcome> declared = new java.util.HashSet<>();
            for (Ending ending : scenario.endings()) {
                declared.add(ending.outcome());
                assertFalse(ending.facts().isEmpty() && scenario instanceof RigScenario<?>,
                        race + ": a rig's ending includes at least its blocks back");
            }
            java.util.Set<RaceOutcome> clean = new java.util.HashSet<>(Arrays.stream(race.outcomes())
                    .filter(o -> o.kind() == OutcomeKind.CLEAN).toList());
            assertEquals(clean, declared, race + " " + variant + ": the clean outcomes and the declared endings differ");
        }
    }

    /**
     * A broken run, whatever its ending, is a modelling error: never the race, never clean. Every schedule of the
     * variant that races and of the one that is clean, each {@link HarnessFault}; the same schedule unbroken is not.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Race.class)
    void aBrokenRunIsAModellingErrorWhateverItsEnding(Race race) {
        for (Variant variant : new Variant[] {Variant.REPORTED, Variant.FIXED}) {
            if (race.expected(variant) == Expectation.NOT_APPLICABLE) {
                continue;
            }
            java.util.Set<OutcomeKind> honestKinds = java.util.EnumSet.noneOf(OutcomeKind.class);
            for (Schedule schedule : Schedule.all(race.scenario(variant))) {
                RaceOutcome honest = schedule.run(Subject.of(race, variant).newScenario(), false).outcome();
                assertFalse(honest.modellingError(), race + " " + variant + " " + schedule + " unbroken: " + honest);
                honestKinds.add(honest.kind());
                for (HarnessFault fault : HarnessFault.values()) {
                    RaceOutcome judged = schedule.run(fault.on(Subject.of(race, variant)).newScenario(), false).outcome();
                    assertTrue(judged.modellingError(), race + " " + variant + " " + schedule + " with " + fault + ": judged " + judged);
                }
            }
            // the faults were tried on both of the arbiter's paths where the variant has both
            assertTrue(honestKinds.contains(race.expected(variant) == Expectation.BUG_FOUND ? OutcomeKind.VIOLATING : OutcomeKind.CLEAN),
                    race + " " + variant + ": " + honestKinds);
        }
    }
}
