package vllmrace.lincheck.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import vllmrace.lincheck.LinearizabilityCheck;
import vllmrace.model.fix.FixSet;
import vllmrace.races.frontend.FrontendYields;

/**
 * Plain Java, no Lincheck: random sequential histories over every frontend operation run on the model
 * ({@link FrontendOperations}) and on {@link FrontendSpecification} side by side. With every fix ON they agree on every
 * result and the invariants hold after every operation: the specification is pinned to the fixed model, so a Lincheck
 * failure on the fixed model could only come from an interleaving. And the check lists every frontend race.
 */
class FrontendSpecificationAgreementTest {
    private static final int HISTORIES = 2000;
    private static final int LENGTH = 24;
    private static final String[] OPS = {"addRequest", "addParallel", "addStop", "addSession", "take", "abort", "cancel",
            "engineStep", "engineStep", "transfersComplete", "outputStep", "outputStep"};

    @AfterEach
    void defaultsAgain() {
        FrontendOperations.configure(FixSet.all(), FrontendLinearizability.EVERY_AWAIT_YIELDS, vllmrace.model.connector.TestAsyncConnector.SavePolicy.ALWAYS);
    }

    /** One operation on the model or the specification, which share the operations' names and signatures. */
    private static Object call(Object target, String op, int id) {
        try {
            java.lang.reflect.Method withId = java.util.Arrays.stream(target.getClass().getMethods())
                    .filter(m -> m.getName().equals(op)).findFirst().orElseThrow();
            return withId.getParameterCount() == 1 ? withId.invoke(target, id) : withId.invoke(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(op + " on " + target.getClass().getSimpleName(), e);
        }
    }

    private static String run(long seed) {
        Random random = new Random(seed);
        FrontendOperations model = new FrontendOperations();
        FrontendSpecification spec = new FrontendSpecification();
        List<String> history = new ArrayList<>();
        for (int i = 0; i < LENGTH; i++) {
            String op = OPS[random.nextInt(OPS.length)];
            int id = random.nextInt(2);
            history.add(op + "(" + id + ")");
            Object got = call(model, op, id);
            Object want = call(spec, op, id);
            if (got == null ? want != null : !got.equals(want)) {
                return "history " + history + ": model " + got + ", specification " + want;
            }
            try {
                model.noDetectorFired();
            } catch (IllegalStateException e) {
                return "history " + history + ": " + e.getMessage();
            }
        }
        return null;
    }

    @Test
    void theFixedModelAgreesWithTheSpecificationOnEveryHistoryWithAndWithoutUniqueIds() {
        for (FixSet fixes : List.of(FixSet.all(), FixSet.all().without(vllmrace.model.fix.Fix.UNIQUE_INTERNAL_IDS)
                .without(vllmrace.model.fix.Fix.ORDERED_ABORT))) {
            FrontendOperations.configure(fixes, FrontendLinearizability.EVERY_AWAIT_YIELDS, vllmrace.model.connector.TestAsyncConnector.SavePolicy.ALWAYS);
            int rejected = 0;
            for (long seed = 0; seed < HISTORIES; seed++) {
                String divergence = run(seed);
                if (fixes.isOn(vllmrace.model.fix.Fix.UNIQUE_INTERNAL_IDS)) {
                    assertNull(divergence, "seed " + seed);
                } else if (divergence != null) {
                    rejected++;
                }
            }
            if (!fixes.isOn(vllmrace.model.fix.Fix.UNIQUE_INTERNAL_IDS)) {
                // without unique ids a sequential re-add beside a delay-freed request collides (DelayFreedIdReuse): the
                // specification is not vacuous
                org.junit.jupiter.api.Assertions.assertTrue(rejected > 0, "no history broke without unique ids");
            }
        }
    }

    @Test
    void theCheckListsEveryFrontendRace() {
        assertEquals(FrontendYields.races(), LinearizabilityCheck.FRONTEND.races());
    }
}
