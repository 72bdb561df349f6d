package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_ERROR;
import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

import java.util.List;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.Ending;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RigScenario;
import vllmrace.races.Violating;

/**
 * SiblingHandleWritesAfterFailure: a NIXL pull reads from two remote TP ranks with one handle each; the first handle
 * fails and the request's failure is reported while the sibling still writes. The scheduler frees the blocks, R2 gets
 * them, and the sibling's posted RDMA writes land in R2's KV.
 *
 * <p><b>Upstream.</b> PR #56104 ("[Bugfix][NIXL] Fix multiple handles xfer race", NickLucche, merged): "the first
 * handle to reach ERR immediately invalidates the request's blocks and reports the failure to the scheduler, while the
 * sibling handles may still be posting RDMA writes into those same blocks. Posted transfers cannot be aborted." Before
 * it (nixl/base_worker.py@00bd5131) {@code _pop_done_transfers} calls {@code _handle_failed_transfer} for each ERR
 * handle at once; the request joins {@code done_recving} through {@code _failed_recv_reqs} in that poll, though its
 * other handle is still PROC in {@code _recving_transfers}. After it (@d80b52aa) the failure waits in
 * {@code _recv_failures} until the request has no handle left ({@code DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP}). #54518
 * (merged before it) only stopped the repeat report from killing the worker ({@code FAILED_RECV_REPORTED_ONCE}); the
 * write remained.
 *
 * <p><b>Set-up and actors.</b> The decode engine's connector is NIXL alone; the prefill side has one TP rank more, so R's
 * pull has two handles. A pool of ONE block; {@code kv_load_failure_policy} "fail" (the default). R (4-token prompt,
 * max_tokens 1, remote prefill) and R2 (local, 4 tokens) are added; one busy-loop iteration allocates R's block B and
 * starts both READs (R is WAITING_FOR_REMOTE_KVS, R2 waits for a block). Actor 1, the NIXL transfer: handle 0 fails
 * (its remote rank is gone), then handle 1 completes, writing its share of B. Actor 2: three busy-loop iterations.
 *
 * <pre>
 *   actor 1: NIXL handles of R                actor 2: EngineCore busy loop + worker get_finished
 *   1. handle 0: ERR
 *                                            2. get_finished: _handle_failed_transfer: B invalid,
 *                                               R in done_recving (handle 1 still PROC)
 *                                            3. update_from_output: R FINISHED_ERROR, B freed
 *                                            4. schedule: R2 gets B
 *   5. handle 1: DONE: its RDMA writes land
 *      in B, now R2's
 *                                            6. get_finished: R done again: the metadata is gone
 *                                               (dropped by #54518; before it, assert meta is not None)
 * </pre>
 *
 * <p>Run one after the other the actors are clean: both handles stop before the first poll sees either (one report),
 * or every iteration runs while both are in progress (the arbiter's iterations report R once, after both).
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the worker's transfers run beside whatever step is in
 * flight.
 *
 * <p><b>Invariant</b> (SC4): no transfer writes a block after it was freed; a request's failure is reported only when
 * nothing of it can still write.
 *
 * <p><b>Verdicts.</b> Reported ({@code DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP} off; #54518 on, so the worker survives the
 * repeat): some interleaving shows the write into the freed block. Fixed: never. vLLM main: closed, by #56104.
 */
public final class SiblingHandleWritesAfterFailureScenario extends RigScenario<ConnectorRig> {

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("R's load failed and was reported once, after both handles stopped: R ended FINISHED_ERROR, B freed after "
                + "the last write, R2 got B and ran") FAILED_ONCE,
        @Violating(value = "without #54518 the sibling's completion reported R again: assert meta is not None killed the worker",
                detectors = {ViolationKind.ENGINE_ASSERT}, cascade = {ViolationKind.WRITE_INTO_FREED_BLOCK},
                cascadeWhy = "the sibling's write lands before its completion is polled") ENGINE_DEAD,
        @Violating(value = "the sibling handle's RDMA writes landed in B after the failure report freed it (and maybe gave it to R2)",
                detectors = {ViolationKind.WRITE_INTO_FREED_BLOCK}) SIBLING_WROTE_FREED_BLOCK;
    }

    private final NixlDecodeConnector nixl;

    /** The scenario at one point of its family: {@code maxTokens}, R2's (default 1; its prompt one token shorter per token more). */
    public SiblingHandleWritesAfterFailureScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlDecodeConnector[1], fixes, config, p);
    }

    private SiblingHandleWritesAfterFailureScenario(NixlDecodeConnector[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> List.of(n[0] = new NixlDecodeConnector("NixlConnector", kv, fixes))), p);
        this.nixl = n[0];
        startTwoHandlePull(rig, nixl, p);
        actors(rig.actor("NIXL transfer: R's two READ handles")
                        .worker("handle 0: check_xfer_state ERR (its remote rank is gone)", () -> nixl.failHandle(REQUEST_ID, 0))
                        .worker("handle 1: check_xfer_state DONE (its RDMA writes land in R's block)", () -> nixl.completeHandle(REQUEST_ID, 1))
                        .build(),
                rig.actor("EngineCore busy loop").iteration().iteration().iteration().build());
    }

    /**
     * R's pull started over two handles into the one block; R2 waits for it, its prompt short enough that its decode
     * tokens fit in the block. Shared with FailedRecvReportedTwice.
     */
    static void startTwoHandlePull(ConnectorRig rig, NixlDecodeConnector nixl, Params p) {
        int r2MaxTokens = p.get("maxTokens", 1, 1);
        nixl.remotePrefill(REQUEST_ID, 4, 2);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 5 - r2MaxTokens, r2MaxTokens);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        rig.runBusyLoopOnce();
        requireSetUp(nixl.isPullInFlight(REQUEST_ID) && rig.request(REQUEST_ID).status() == RequestStatus.WAITING_FOR_REMOTE_KVS,
                "R's pull did not start: " + rig.request(REQUEST_ID));
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.FAILED_ONCE).and(finished(REQUEST_ID, FINISHED_ERROR), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
