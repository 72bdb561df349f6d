package vllmrace.lincheck.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/**
 * Plain Java, no Lincheck: random sequential histories run on the model ({@link SchedulerOperations}) and on
 * {@link SchedulerSpecification} side by side. With every fix ON they agree on every result and the invariants
 * hold after every operation; this pins the specification to the fixed model, so a Lincheck failure on the
 * fixed model could only come from an interleaving, under async and sync scheduling alike. With the switches of
 * any race in the check's operation set OFF some history disagrees or breaks an invariant: the specification is not
 * vacuous.
 */
class SchedulerSpecificationAgreementTest {
    private static final int HISTORIES = 3000;
    private static final int LENGTH = 24;
    private static boolean lastHistoryResubmitted;

    @AfterEach
    void allFixesAgain() {
        SchedulerOperations.configure(FixSet.all());
    }

    /** Runs one random history; returns the first divergence or broken invariant, or null. */
    private static String run(long seed) {
        lastHistoryResubmitted = false;
        Random random = new Random(seed);
        SchedulerOperations model = new SchedulerOperations();
        SchedulerSpecification spec = new SchedulerSpecification();
        List<String> history = new ArrayList<>();
        for (int i = 0; i < LENGTH; i++) {
            int op = random.nextInt(10);
            int id = random.nextInt(2);
            Object got;
            Object want;
            if (op < 2) {
                history.add("add(" + id + ")");
                got = model.addRequest(id);
                lastHistoryResubmitted |= Boolean.TRUE.equals(got) && history.subList(0, history.size() - 1).contains("add(" + id + ")");
                want = spec.addRequest(id);
            } else if (op < 3) {
                history.add("abort(" + id + ")");
                model.abort(id);
                spec.abort(id);
                got = want = null;
            } else if (op < 4) {
                history.add("transfersComplete");
                model.transfersComplete();
                spec.transfersComplete();
                got = want = null;
            } else {
                history.add("busyLoopStep");
                got = model.busyLoopStep();
                want = spec.busyLoopStep();
            }
            if (got == null ? want != null : !got.equals(want)) {
                return "history " + history + ": model " + got + ", specification " + want;
            }
            try {
                model.invariantsHold();
            } catch (IllegalStateException e) {
                return "history " + history + ": " + e.getMessage();
            }
        }
        return null;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Profile.class, names = {"MAIN", "MAIN_SYNC_SCHEDULING"})
    void fixedModelAgreesWithTheSpecificationOnEveryHistory(Profile deployment) {
        SchedulerOperations.configure(FixSet.all(), deployment.configuration());
        int resubmitted = 0;
        for (long seed = 0; seed < HISTORIES; seed++) {
            String divergence = run(seed);
            assertEquals(null, divergence, "seed " + seed);
            resubmitted += lastHistoryResubmitted ? 1 : 0;
        }
        assertTrue(resubmitted > 0, "no history resubmitted an aborted id: the resubmission path went unchecked");
    }

    @Test
    void eachSchedulerRaceAsReportedBreaksSomeHistory() {
        for (Race race : vllmrace.lincheck.LinearizabilityCheck.SCHEDULER.operationRaces()) {
            SchedulerOperations.configure(race.fixes(Variant.REPORTED), race.configuration());
            String first = null;
            for (long seed = 0; seed < HISTORIES && first == null; seed++) {
                first = run(seed);
            }
            System.out.println(race + " as reported: " + first);
            assertTrue(first != null, race + " as reported: no history diverged");
        }
    }
}
