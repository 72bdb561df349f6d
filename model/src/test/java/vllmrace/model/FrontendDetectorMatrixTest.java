package vllmrace.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.engine.EngineCoreMessage;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.OutputProcessor;
import vllmrace.model.frontend.RequestOutputCollector;
import vllmrace.model.frontend.SamplingParams;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;

/**
 * The frontend detectors (FE1 a second live request under one id, FE2 an ABORT that finishes another request, FE3 an
 * orphaned caller and its converse, FE4 a parent that outlives its children) as a matrix, so none is exercised with a
 * connector only, without one only, or for one way of finishing only: no connector and a connector that async-saves
 * every finished request (its requests linger in {@code Scheduler.requests}) × how the request ended or what EngineCore
 * holds × the closing fix off and on where one exists. The expected answer is this class's own rule per cell, not the
 * model's: a detector that misses a cell or fires where nothing is wrong fails it.
 */
class FrontendDetectorMatrixTest {
    private static final int BLOCKS = 8;

    /** How the client's first request under X ended, seen from the frontend: every way the frontend finishes one. */
    enum Ending { LENGTH, STOP_STRING, CLIENT_ABORT }

    private static VllmInstance instance(FixSet fixes, boolean saver) {
        return saver ? new VllmInstance(fixes, SavePolicy.ALWAYS, BLOCKS) : new VllmInstance(fixes, SavePolicy.NEVER, BLOCKS);
    }

    /** Steps EngineCore and the output handler, completing every save, until nothing is left to do. */
    private static void settle(VllmInstance vllm) {
        for (int i = 0; i < 6; i++) {
            vllm.engineCore().runBusyLoopOnce();
            vllm.connector().finishInFlightTransfers();
            vllm.asyncLlm().outputHandler().run().join();
        }
    }

    private static List<ViolationKind> kinds(VllmInstance vllm) {
        return vllm.violations().all().stream().map(v -> v.kind()).toList();
    }

    static Stream<Arguments> reAddCells() {
        List<Arguments> cells = new ArrayList<>();
        for (boolean saver : new boolean[] {false, true}) {
            for (Ending ending : Ending.values()) {
                for (boolean unique : new boolean[] {false, true}) {
                    cells.add(Arguments.of(saver, ending, unique));
                }
            }
        }
        return cells.stream();
    }

    /**
     * FE1: the client re-adds X once its first request's caller has its final output. EngineCore still holds the first
     * exactly when a connector saves it (every finish, the abort included); the re-ADD collides then unless the
     * frontend gave the second one its own internal id (#27987). Every other cell ends with no violation at all.
     */
    @ParameterizedTest(name = "saver={0} ended={1} uniqueIds={2}")
    @MethodSource("reAddCells")
    void fe1FiresExactlyWhenTheFirstRequestLingersUnderTheSameId(boolean saver, Ending ending, boolean unique) {
        FixSet fixes = unique ? FixSet.all() : FixSet.all().without(Fix.UNIQUE_INTERNAL_IDS);
        VllmInstance vllm = instance(fixes, saver);
        SamplingParams params = switch (ending) {
            case LENGTH -> SamplingParams.maxTokens(1);
            case STOP_STRING -> new SamplingParams(1, 4, 1);
            case CLIENT_ABORT -> SamplingParams.maxTokens(4);
        };
        RequestOutputCollector first = vllm.asyncLlm().addRequest("X", params).run().join();
        vllm.engineCore().runBusyLoopOnce();
        vllm.asyncLlm().outputHandler().run().join();
        if (ending == Ending.CLIENT_ABORT) {
            vllm.asyncLlm().abort(first.requestId()).run().join();
        }
        vllm.engineCore().runBusyLoopOnce(); // the stop string's or the client's ABORT applied
        vllm.asyncLlm().outputHandler().run().join();
        assertEquals(1, first.numFinalOutputs(), "the first caller has its final output");
        String reason = switch (ending) {
            case LENGTH -> "length";
            case STOP_STRING -> OutputProcessor.FINISH_REASON_STOP;
            case CLIENT_ABORT -> OutputProcessor.FINISH_REASON_ABORT;
        };
        assertEquals(reason, first.finishReason());
        assertEquals(saver, !vllm.scheduler().requestsSnapshot().isEmpty(), "a saved request lingers in EngineCore, else it is gone");

        vllm.asyncLlm().addRequest("X", SamplingParams.maxTokens(1)).run().join();
        vllm.engineCore().processInputQueue();
        boolean collides = saver && !unique;
        assertEquals(collides, kinds(vllm).contains(ViolationKind.DUPLICATE_LIVE_REQUEST), kinds(vllm).toString());
        if (collides) {
            assertEquals(ViolationKind.DUPLICATE_LIVE_REQUEST, kinds(vllm).get(0));
        } else {
            settle(vllm);
            vllm.checkQuiescence();
            assertEquals(List.of(), vllm.violations().all());
            assertTrue(vllm.scheduler().requestsSnapshot().isEmpty(), "both requests released");
        }
    }

    /** What EngineCore holds under X when an ABORT computed for X@1 arrives: nothing, X@1 or X@2, in each status. */
    enum Held { NOTHING, WAITING, RUNNING, FINISHED_STOPPED, FINISHED_LENGTH_CAPPED, FINISHED_ABORTED, FINISHED_IGNORED }

    static Stream<Arguments> abortCells() {
        List<Arguments> cells = new ArrayList<>();
        for (boolean saver : new boolean[] {false, true}) {
            for (Held held : Held.values()) {
                for (long arrival : new long[] {1, 2}) {
                    cells.add(Arguments.of(saver, held, arrival));
                }
            }
        }
        return cells.stream();
    }

    /**
     * FE2: the ABORT for X@1 finishes whatever EngineCore holds under X; it is the race's finding exactly when that is
     * another, unfinished request (a finished one, lingering for its save, is left as it is by the abort).
     */
    @ParameterizedTest(name = "saver={0} held={1}@{2}")
    @MethodSource("abortCells")
    void fe2FiresExactlyWhenTheAbortFinishesAnotherLiveRequest(boolean saver, Held held, long arrival) {
        VllmInstance vllm = instance(FixSet.all(), saver);
        if (held != Held.NOTHING) {
            vllm.inputSocket().send(new EngineCoreMessage.Add(new EngineCoreRequest("X", arrival, 4)));
            vllm.engineCore().processInputQueue();
            if (held != Held.WAITING) {
                vllm.engineCore().step();
                vllm.process().outputSocket().drain();
            }
            if (held.name().startsWith("FINISHED_")) {
                vllm.scheduler().finishRequests(List.of("X"), RequestStatus.valueOf(held.name()));
            }
        }
        boolean present = !vllm.scheduler().requestsSnapshot().isEmpty();
        assertEquals(held != Held.NOTHING && (saver || !held.name().startsWith("FINISHED_")), present, "what EngineCore holds");
        Request before = vllm.scheduler().getRequest("X");
        boolean wrong = before != null && !before.isFinished() && arrival != 1;
        vllm.inputSocket().send(new EngineCoreMessage.Abort(List.of("X"), Map.of("X", 1L)));
        vllm.engineCore().processInputQueue();
        assertEquals(wrong ? List.of(ViolationKind.ABORT_HIT_WRONG_REQUEST) : List.of(), kinds(vllm));
    }

    /** What EngineCore holds under X at quiescence while the frontend waits on X@1 (or on nothing). */
    enum EngineHolds { NOTHING, SAME_RUNNING, SAME_FINISHED_SAVING, OTHER_RUNNING }

    static Stream<Arguments> quiescenceCells() {
        List<Arguments> cells = new ArrayList<>();
        for (boolean frontendWaits : new boolean[] {false, true}) {
            for (EngineHolds holds : EngineHolds.values()) {
                for (RequestStatus finished : new RequestStatus[] {RequestStatus.FINISHED_STOPPED, RequestStatus.FINISHED_LENGTH_CAPPED,
                        RequestStatus.FINISHED_ABORTED, RequestStatus.FINISHED_IGNORED}) {
                    if (holds == EngineHolds.SAME_FINISHED_SAVING || finished == RequestStatus.FINISHED_STOPPED) {
                        cells.add(Arguments.of(frontendWaits, holds, finished));
                    }
                }
            }
        }
        return cells.stream();
    }

    /**
     * FE3 both ways: a caller waits on X@1 and EngineCore runs no X@1 (nothing, a finished one saving, another X), or
     * EngineCore runs an X with no caller waiting on it. Exactly one side fires per cell, or neither where both agree.
     */
    @ParameterizedTest(name = "frontendWaits={0} engine={1} ({2})")
    @MethodSource("quiescenceCells")
    void fe3FiresExactlyWhereFrontendAndEngineDisagree(boolean frontendWaits, EngineHolds holds, RequestStatus finished) {
        VllmInstance vllm = instance(FixSet.all().without(Fix.UNIQUE_INTERNAL_IDS), true);
        if (frontendWaits) {
            vllm.asyncLlm().addRequest("X", 4).run().join(); // X@1: ADD on the wire
            vllm.inputSocket().drain(); // lost on the way: EngineCore gets only what the cell gives it
        }
        if (holds != EngineHolds.NOTHING) {
            long arrival = holds == EngineHolds.OTHER_RUNNING ? 2 : 1;
            vllm.inputSocket().send(new EngineCoreMessage.Add(new EngineCoreRequest("X", arrival, 4)));
            vllm.engineCore().processInputQueue();
            vllm.engineCore().step();
            vllm.process().outputSocket().drain();
            if (holds == EngineHolds.SAME_FINISHED_SAVING) {
                vllm.scheduler().finishRequests(List.of("X"), finished); // saved: X@1 stays, finished
            }
        }
        vllm.checkQuiescence();
        List<ViolationKind> expected = new ArrayList<>();
        if (frontendWaits && holds != EngineHolds.SAME_RUNNING) {
            expected.add(ViolationKind.ORPHANED_FRONTEND_REQUEST);
        }
        if ((holds == EngineHolds.SAME_RUNNING || holds == EngineHolds.OTHER_RUNNING) && !(frontendWaits && holds == EngineHolds.SAME_RUNNING)) {
            expected.add(ViolationKind.ENGINE_REQUEST_WITHOUT_FRONTEND);
        }
        assertEquals(expected, kinds(vllm));
    }

    static Stream<Arguments> parentCells() {
        List<Arguments> cells = new ArrayList<>();
        for (boolean saver : new boolean[] {false, true}) {
            for (Ending ending : Ending.values()) {
                cells.add(Arguments.of(saver, ending));
            }
        }
        return cells.stream();
    }

    /**
     * FE4 both ways, the clean side: a parent request (n = 2) whose children end each way, with a saving connector and
     * without, leaves neither a parent without children nor a child without its parent.
     */
    @ParameterizedTest(name = "saver={0} ended={1}")
    @MethodSource("parentCells")
    void fe4StaysQuietWhenEveryChildEndsAnyWay(boolean saver, Ending ending) {
        VllmInstance vllm = instance(FixSet.all(), saver);
        SamplingParams params = switch (ending) {
            case LENGTH -> SamplingParams.maxTokens(1).withN(2);
            case STOP_STRING -> new SamplingParams(2, 4, 1);
            case CLIENT_ABORT -> SamplingParams.maxTokens(4).withN(2);
        };
        RequestOutputCollector parent = vllm.asyncLlm().addRequest("P", params).run().join();
        assertEquals(1, vllm.outputProcessor().parentRequestsSnapshot().size(), "the parent is tracked while its children run");
        vllm.engineCore().runBusyLoopOnce();
        vllm.asyncLlm().outputHandler().run().join();
        if (ending == Ending.CLIENT_ABORT) {
            vllm.asyncLlm().abort(parent.requestId()).run().join();
        }
        settle(vllm);
        vllm.checkQuiescence();
        assertEquals(List.of(), vllm.violations().all());
        assertEquals(Map.of(), vllm.outputProcessor().parentRequestsSnapshot());
        assertTrue(vllm.outputProcessor().requestStatesSnapshot().isEmpty());
    }
}
