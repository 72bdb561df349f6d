package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.model.connector.KvConnectorBaseV1;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.TestAsyncConnector;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.connector.multi.MultiConnector;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;

/**
 * The request-map detectors (SC1's double {@code _free_request}, SC3's output for a finished request, CN1's late transfer
 * report, CN3's empty hand-off) as a matrix, so none is exercised for one connector or one finish reason only: every
 * connector the model runs (none, the NIXL decode and prefill sides, an LMCache-like offloader that saves every finished
 * request, a MultiConnector over NIXL and LMCache children) × every finished {@link RequestStatus}, each detector with
 * its closing fix off and on. The expectation is this class's own table of what upstream does per connector and status
 * ({@link #lingers}, {@link #requiresDelivery}), not the model's answer: a detector that misses a connector or a
 * status, or fires where the fix closed it, fails its cell. Where a detector's state cannot arise (no connector keeps a
 * finished request in {@code requests}), the cell says so by expecting nothing and showing the request gone.
 */
class RequestDetectorMatrixTest {
    private static final String R = "R";

    /** The connector of a cell. */
    enum Connector { NONE, NIXL_DECODE, NIXL_PREFILL, LMCACHE_SAVES_ALL, MULTI_NIXL_LMCACHE }

    private static final List<RequestStatus> FINISHED = Stream.of(RequestStatus.values()).filter(s -> RequestStatus.isFinished(s)).toList();

    /**
     * Whether {@code request_finished} keeps a request finished with {@code status} in {@code requests} (an async save):
     * the decode side never does, the prefill side only for a normal finish (it hands the KV to the decoder), an
     * offloader that saves every finished request always (#33377), a MultiConnector when any child saves.
     */
    static boolean lingers(Connector connector, RequestStatus status) {
        return switch (connector) {
            case NONE, NIXL_DECODE -> false;
            case NIXL_PREFILL -> normal(status);
            case LMCACHE_SAVES_ALL, MULTI_NIXL_LMCACHE -> true;
        };
    }

    /** {@code requires_kv_delivery}: a producer's, and {@code kv_both}'s by the base class's default; any child's for MultiConnector. */
    static boolean requiresDelivery(Connector connector) {
        return connector == Connector.NIXL_PREFILL || connector == Connector.LMCACHE_SAVES_ALL
                || connector == Connector.MULTI_NIXL_LMCACHE;
    }

    private static boolean normal(RequestStatus status) {
        return status == RequestStatus.FINISHED_STOPPED || status == RequestStatus.FINISHED_LENGTH_CAPPED;
    }

    /** One cell's engine: a scheduler over a 4-block pool with the cell's connector. */
    private static final class Cell {
        final ViolationLog log = new ViolationLog();
        final KvCacheManager kv = new KvCacheManager(new BlockPool(4, log), 4, log);
        final Scheduler s;

        Cell(Connector connector, FixSet fixes) {
            s = new Scheduler(fixes, log, kv, connector(connector, kv, fixes));
        }

        private static KvConnectorBaseV1 connector(Connector connector, KvCacheManager kv, FixSet fixes) {
            return switch (connector) {
                case NONE -> null;
                case NIXL_DECODE -> new TestAsyncConnector(kv, SavePolicy.NEVER, fixes);
                case NIXL_PREFILL -> new TestAsyncConnector(kv, SavePolicy.ON_SUCCESS, fixes);
                case LMCACHE_SAVES_ALL -> new TestAsyncConnector(kv, SavePolicy.ALWAYS, fixes);
                case MULTI_NIXL_LMCACHE -> new MultiConnector(fixes, List.of(new NixlDecodeConnector("NIXL", kv, fixes),
                        LmCacheConnector.outOfTree("LMCache", kv, true)));
            };
        }

        /** R (4 prompt tokens, up to 4 output) runs one step and samples a token; a second step for it is dispatched. */
        SchedulerOutput runOneStepAndDispatchAnother() {
            s.addRequest(new Request(R, 1, 4, 4));
            SchedulerOutput first = s.schedule();
            s.updateFromOutput(first, ModelRunnerOutput.execute(first));
            SchedulerOutput second = s.schedule();
            assertTrue(second.numScheduledTokens().containsKey(R), "set-up: R is in the second step");
            return second;
        }

        void deliver(KvConnectorOutput report) {
            SchedulerOutput step = s.schedule();
            s.updateFromOutput(step, new ModelRunnerOutput(List.copyOf(step.numScheduledTokens().keySet()), report));
        }

        Map<ViolationKind, Integer> byKind() {
            Map<ViolationKind, Integer> kinds = new TreeMap<>();
            for (Violation v : log.all()) {
                assertEquals(R, v.requestId(), "only R is in play: " + v);
                kinds.merge(v.kind(), 1, Integer::sum);
            }
            return kinds;
        }
    }

    static Stream<Arguments> cells() {
        List<Arguments> cells = new ArrayList<>();
        for (Connector connector : Connector.values()) {
            for (RequestStatus status : FINISHED) {
                for (boolean fixOn : new boolean[] {false, true}) {
                    cells.add(Arguments.of(connector, status, fixOn));
                }
            }
        }
        return cells.stream();
    }

    private static FixSet fixes(Fix closer, boolean on) {
        return on ? FixSet.all() : FixSet.all().without(closer);
    }

    private static Map<ViolationKind, Integer> once(ViolationKind kind, boolean fires) {
        return fires ? Map.of(kind, 1) : Map.of();
    }

    /** SC1: a second finish of R (an abort of a finished request): {@code _free_request} runs again unless #21257's skip. */
    @ParameterizedTest(name = "SC1: connector {0}, R {1}, skip on {2}")
    @MethodSource("cells")
    void aSecondFinishOfAHeldRequestIsADoubleFree(Connector connector, RequestStatus status, boolean fixOn) {
        Cell cell = new Cell(connector, fixes(Fix.SKIP_ABORT_OF_FINISHED, fixOn));
        cell.runOneStepAndDispatchAnother();
        cell.s.finishRequests(List.of(R), status);
        assertEquals(lingers(connector, status), cell.s.getRequest(R) != null, "set-up: R held exactly when its free is delayed");
        cell.s.finishRequests(List.of(R), RequestStatus.FINISHED_ABORTED);
        assertEquals(once(ViolationKind.DOUBLE_FREE_REQUEST, lingers(connector, status) && !fixOn), cell.byKind(), cell.log.all().toString());
    }

    /** SC3: the output of a step dispatched before R finished is applied to R unless the is_finished guard skips it. */
    @ParameterizedTest(name = "SC3: connector {0}, R {1}, guard on {2}")
    @MethodSource("cells")
    void anOutputForAHeldFinishedRequestIsApplied(Connector connector, RequestStatus status, boolean fixOn) {
        Cell cell = new Cell(connector, fixes(Fix.IS_FINISHED_GUARD, fixOn));
        SchedulerOutput inFlight = cell.runOneStepAndDispatchAnother();
        cell.s.finishRequests(List.of(R), status);
        cell.s.updateFromOutput(inFlight, ModelRunnerOutput.execute(inFlight));
        assertEquals(once(ViolationKind.OUTPUT_FOR_FINISHED_REQUEST, lingers(connector, status) && !fixOn), cell.byKind(),
                cell.log.all().toString());
    }

    static Stream<Arguments> reportCells() {
        List<Arguments> cells = new ArrayList<>();
        for (Connector connector : Connector.values()) {
            if (connector == Connector.NONE) {
                continue; // without a connector the worker sends no kv_connector_output: there is no report to be late
            }
            for (RequestStatus status : FINISHED) {
                for (boolean recv : new boolean[] {false, true}) {
                    for (boolean fixOn : new boolean[] {false, true}) {
                        cells.add(Arguments.of(connector, status, recv, fixOn));
                    }
                }
            }
        }
        return cells.stream();
    }

    /**
     * CN1: a transfer report for R after R left {@code requests} (a held R is first released by its own report) trips
     * {@code assert req_id in self.requests} unless seed 003's skip of late reports. A finished_recving is judged so only
     * with #25067's delayed free (before it the id is only collected).
     */
    @ParameterizedTest(name = "CN1: connector {0}, R {1}, recv {2}, skip on {3}")
    @MethodSource("reportCells")
    void aReportForARequestNoLongerHeldIsLate(Connector connector, RequestStatus status, boolean recv, boolean fixOn) {
        Cell cell = new Cell(connector, fixes(Fix.SCHEDULER_SKIP_LATE_REPORT, fixOn));
        cell.runOneStepAndDispatchAnother();
        cell.s.finishRequests(List.of(R), status);
        KvConnectorOutput report = recv ? new KvConnectorOutput(Set.of(), Set.of(R), Set.of())
                : new KvConnectorOutput(Set.of(R), Set.of(), Set.of());
        if (lingers(connector, status)) {
            cell.deliver(new KvConnectorOutput(Set.of(R), Set.of(), Set.of())); // its save completes: R is freed
            assertEquals(Map.of(), cell.byKind(), "R's own report releases it: " + cell.log.all());
        }
        assertEquals(null, cell.s.getRequest(R), "set-up: R is gone");
        cell.deliver(report);
        assertEquals(once(ViolationKind.LATE_TRANSFER_REPORT, !fixOn), cell.byKind(), cell.log.all().toString());
    }

    static Stream<Arguments> handOffCells() {
        List<Arguments> cells = new ArrayList<>();
        for (Connector connector : Connector.values()) {
            for (RequestStatus status : FINISHED) {
                for (boolean preempted : new boolean[] {false, true}) {
                    for (boolean fixOn : new boolean[] {false, true}) {
                        cells.add(Arguments.of(connector, status, preempted, fixOn));
                    }
                }
            }
        }
        return cells.stream();
    }

    /**
     * CN3: R sampled a token, then (preempted with its next step in flight, or not) finishes with {@code status}: stop
     * and length by that step's output (a stop token, the length cap), the others by {@code finish_requests}. Only a
     * normal finish of a preempted R hands a connector that requires delivery an empty block list, unless #50297
     * drops the in-flight output of a preempted request (R then never finishes from it).
     */
    @ParameterizedTest(name = "CN3: connector {0}, R {1}, preempted {2}, #50297 on {3}")
    @MethodSource("handOffCells")
    void aNormalFinishOfAPreemptedRequestHandsOffNothing(Connector connector, RequestStatus status, boolean preempted, boolean fixOn) {
        Cell cell = new Cell(connector, fixes(Fix.REQUIRES_KV_DELIVERY, fixOn));
        int stopAt = status == RequestStatus.FINISHED_STOPPED ? 2 : 0;
        int maxTokens = status == RequestStatus.FINISHED_LENGTH_CAPPED ? 2 : 4;
        cell.s.addRequest(new Request(R, 1, 4, maxTokens, stopAt));
        SchedulerOutput first = cell.s.schedule();
        cell.s.updateFromOutput(first, ModelRunnerOutput.execute(first));
        SchedulerOutput last = cell.s.schedule();
        if (preempted) {
            cell.s.preemptRequest(R);
        }
        if (normal(status)) {
            cell.s.updateFromOutput(last, ModelRunnerOutput.execute(last));
        } else {
            cell.s.finishRequests(List.of(R), status);
        }
        boolean dropped = preempted && fixOn && requiresDelivery(connector);
        if (normal(status)) {
            assertEquals(dropped ? RequestStatus.PREEMPTED : status, statusOf(cell, status), "set-up: how R ends");
        }
        boolean empty = preempted && normal(status) && requiresDelivery(connector) && !fixOn;
        assertEquals(once(ViolationKind.EMPTY_KV_HANDOFF, empty), cell.byKind(), cell.log.all().toString());
    }

    private static RequestStatus statusOf(Cell cell, RequestStatus finished) {
        Request r = cell.s.getRequest(R);
        return r == null ? finished : r.status(); // freed at once: gone from requests, so it finished
    }
}
