package vllmrace.model.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import vllmrace.model.connector.KvRole;
import vllmrace.model.connector.MatchedTokens;
import vllmrace.model.connector.PendingTransfers;
import vllmrace.model.connector.RequestFinishedResult;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.kv.TransferTarget;

/**
 * The settled-engine detectors as a matrix, so none is exercised for one request state only: every
 * {@link RequestStatus} a request can be left holding in {@code requests}, with and without a KV-cache manager and
 * blocks, with no connector, a connector that still owes a transfer of it and one that owes nothing, and (for the
 * blocked busy loop) #43433 on and off. Each cell states which detector, if any, names the request: exactly that one
 * and nothing else (LV1's REQUEST_STUCK, LV1/LV2's REQUEST_LEAKED, SC5's DELAY_FREED_NEVER_RELEASED with its
 * BLOCK_LEAK), so a detector that
 * misses a state, or fires where it must not, fails its cell.
 */
class LivenessDetectorMatrixTest {
    private static final String R = "R";

    /** The connector of a cell: none, one that delays the free and still owes R a transfer, one that delays and owes nothing. */
    enum Connector { NONE, OWES_A_TRANSFER, OWES_NOTHING }

    static Stream<Arguments> cells() {
        List<Arguments> cells = new ArrayList<>();
        for (RequestStatus status : RequestStatus.values()) {
            for (boolean blocks : new boolean[] {false, true}) {
                for (Connector connector : Connector.values()) {
                    if (connector != Connector.NONE || !blocks) { // a connector needs the KV manager; blocks, the manager
                        cells.add(Arguments.of(status, blocks || connector != Connector.NONE, connector));
                    }
                }
            }
        }
        return cells.stream().distinct();
    }

    /** A connector that asks to delay every free and owes R a transfer or not; it loads nothing. */
    static final class StubConnector implements KvConnectorBaseV1, PendingTransfers {
        private final boolean owes;

        StubConnector(boolean owes) {
            this.owes = owes;
        }

        @Override
        public MatchedTokens getNumNewMatchedTokens(Request request, int numComputedTokens) {
            return MatchedTokens.NONE;
        }

        @Override
        public void updateStateAfterAlloc(Request request, List<Integer> blockIds, int numExternalTokens) {
        }

        @Override
        public RequestFinishedResult requestFinished(Request request, List<Integer> blockIds) {
            return new RequestFinishedResult(true, null);
        }

        @Override
        public void updateConnectorOutput(KvConnectorOutput kvConnectorOutput) {
        }

        @Override
        public KvRole kvRole() {
            return KvRole.KV_BOTH;
        }

        @Override
        public boolean hasPendingTransfer(String requestId) {
            return owes && R.equals(requestId);
        }

        @Override
        public List<TransferTarget> inFlightLoadTargets() {
            return List.of();
        }
    }

    /** R left in {@code status}: admitted (and scheduled, so holding blocks, where there is a KV manager), then put in it. */
    private static Scheduler leave(RequestStatus status, boolean kvManager, Connector connector, FixSet fixes, ViolationLog log) {
        KvCacheManager kv = kvManager ? new KvCacheManager(new BlockPool(4, log), 4, log) : null;
        Scheduler s = new Scheduler(fixes, log, kv, connector == Connector.NONE ? null : new StubConnector(connector == Connector.OWES_A_TRANSFER));
        s.addRequest(new Request(R, 4, 4));
        if (kvManager) {
            s.schedule();
        }
        if (status.isFinished()) {
            s.finishRequests(List.of(R), status); // _free_request: the connector delays the free, or R goes now
            s.schedule(); // the next step sends finished_req_ids to the workers and clears it
        } else {
            s.getRequest(R).setStatus(status); // as the scheduler would; R stays in its queue
        }
        return s;
    }

    /** Who names R once the engine settled: LV1 then the quiescence detectors (SC5 among them). */
    @ParameterizedTest(name = "R {0}, KV manager {1}, connector {2}")
    @MethodSource("cells")
    void aSettledEngineNamesAHeldRequestByExactlyOneDetector(RequestStatus status, boolean kvManager, Connector connector) {
        ViolationLog log = new ViolationLog();
        Scheduler s = leave(status, kvManager, connector, FixSet.all(), log);
        s.checkLiveness(1);
        s.checkQuiescence();
        Map<ViolationKind, Integer> expected;
        if (!status.isFinished()) {
            expected = Map.of(ViolationKind.REQUEST_STUCK, 1); // nothing will schedule it: every state before FINISHED_*
        } else if (connector == Connector.NONE) {
            expected = Map.of(); // freed at once: nothing held
        } else if (connector == Connector.OWES_A_TRANSFER) {
            expected = Map.of(ViolationKind.REQUEST_LEAKED, 1); // the transfer that would free it will not come
        } else {
            // nothing will release it (SC5), and its one block is held by no live request and no transfer (SC5's leak)
            expected = Map.of(ViolationKind.DELAY_FREED_NEVER_RELEASED, 1, ViolationKind.BLOCK_LEAK, 1);
        }
        assertEquals(expected, byKind(log, status), "R " + status + ": " + log.all());
    }

    static Stream<Arguments> blockedLoopCells() {
        List<Arguments> cells = new ArrayList<>();
        for (RequestStatus status : RequestStatus.values()) {
            for (Connector connector : Connector.values()) {
                for (boolean countsDelayFreed : new boolean[] {false, true}) {
                    cells.add(Arguments.of(status, connector, countsDelayFreed));
                }
            }
        }
        return cells.stream();
    }

    /**
     * LV2 at a blocked busy loop: R is named REQUEST_LEAKED exactly when it is still in {@code requests} and
     * {@code has_requests()} is False (finished, delay-freed, a transfer still owed, #43433 off: with it the loop keeps
     * polling); an unfinished R keeps the loop running, and one nothing will release is SC5's, not LV2's.
     */
    @ParameterizedTest(name = "R {0}, connector {1}, #43433 {2}")
    @MethodSource("blockedLoopCells")
    void aBlockedLoopNamesWhatOnlyAnotherRequestWouldFree(RequestStatus status, Connector connector, boolean countsDelayFreed) {
        ViolationLog log = new ViolationLog();
        FixSet fixes = countsDelayFreed ? FixSet.all() : FixSet.all().without(Fix.HAS_REQUESTS_COUNTS_DELAY_FREED);
        Scheduler s = leave(status, connector != Connector.NONE, connector, fixes, log);
        s.checkBlockedLoop(false);
        assertEquals(Map.of(), byKind(log, status), "a loop still busy is never blocked");
        s.checkBlockedLoop(true);
        boolean leaked = status.isFinished() && connector == Connector.OWES_A_TRANSFER && !countsDelayFreed;
        assertEquals(leaked ? Map.of(ViolationKind.REQUEST_LEAKED, 1) : Map.of(), byKind(log, status), "R " + status + ": " + log.all());
    }

    private static Map<ViolationKind, Integer> byKind(ViolationLog log, RequestStatus status) {
        Map<ViolationKind, Integer> kinds = new TreeMap<>();
        for (Violation v : log.all()) {
            assertEquals(R, v.requestId(), "only R is held: " + v);
            kinds.merge(v.kind(), 1, Integer::sum);
        }
        return kinds;
    }
}
