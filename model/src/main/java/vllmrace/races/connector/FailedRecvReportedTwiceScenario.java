package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_ERROR;
import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

import java.util.List;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Clean;
import vllmrace.races.Ending;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RigScenario;
import vllmrace.races.Violating;

/**
 * FailedRecvReportedTwice: both NIXL handles of a pull fail, in two successive polls of the decode worker; the request is
 * reported for each, and the second report finds its receive metadata gone: {@code assert meta is not None} raises out
 * of the worker's busy loop and EngineCore dies.
 *
 * <p><b>Upstream.</b> PR #54518 ("[Bugfix][NIXL] Don't assert when a failed transfer is cleaned up twice", merged; seen
 * on a 10P/3D deployment whose prefill nodes lost their NICs): before it (nixl/base_worker.py@00bd5131) each failed
 * handle puts the id on {@code _failed_recv_reqs}, {@code get_finished} adds that queue to {@code done_recving} and pops
 * {@code _recving_metadata[id]} with {@code assert meta is not None}. The first failure pops the metadata; the second,
 * a poll later, asserts. The PR "tolerates the missing metadata and drops the repeat from done_recving"
 * ({@code FAILED_RECV_REPORTED_ONCE}; without the drop the scheduler's {@code assert RequestStatus.is_finished} or
 * {@code assert req_id in self.requests} fails next). #56104 then deferred every failure until all handles stopped
 * ({@code DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP}), which closes it too.
 *
 * <p><b>Set-up and actors.</b> As SiblingHandleWritesAfterFailure: NIXL alone, R's pull over two handles into the one
 * block, R2 waiting, {@code kv_load_failure_policy} "fail". Actor 1, the NIXL transfer: handle 0 fails, then handle 1
 * fails (the same dead peer; neither writes). Actor 2: three busy-loop iterations.
 *
 * <pre>
 *   actor 1: NIXL handles of R                actor 2: EngineCore busy loop + worker get_finished
 *   1. handle 0: ERR
 *                                            2. get_finished: R in done_recving via _failed_recv_reqs;
 *                                               _recving_metadata[R] popped (handle 1 still PROC)
 *                                            3. update_from_output: R FINISHED_ERROR, its block freed
 *   4. handle 1: ERR
 *                                            5. get_finished: R in _failed_recv_reqs again;
 *                                               _recving_metadata.pop(R) is None: assert meta is not None
 *                                               raises out of worker_busy_loop: EngineCore dead
 * </pre>
 *
 * <p>Run one after the other the actors are clean: both failures reach one poll (one report), or both come after every
 * iteration (the arbiter's iterations report R once).
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the worker's polls run beside whatever step is in flight.
 *
 * <p><b>Invariant</b> (CN1): each request gets exactly one terminal transfer event.
 *
 * <p><b>Verdicts.</b> Reported (both fixes off): some interleaving kills the engine. Fixed (either): never. vLLM main:
 * closed, by #54518 and #56104.
 */
public final class FailedRecvReportedTwiceScenario extends RigScenario<ConnectorRig> {

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("R's load failed and was reported once: R ended FINISHED_ERROR, R2 got the block and ran") FAILED_ONCE,
        @Violating(value = "R's failure was reported a second time: assert meta is not None killed the worker, EngineCore dead",
                detectors = {ViolationKind.ENGINE_ASSERT}) ENGINE_DEAD;
    }

    private final NixlDecodeConnector nixl;

    /** The scenario at one point of its family: {@code maxTokens}, R2's (default 1). */
    public FailedRecvReportedTwiceScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlDecodeConnector[1], fixes, config, p);
    }

    private FailedRecvReportedTwiceScenario(NixlDecodeConnector[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> List.of(n[0] = new NixlDecodeConnector("NixlConnector", kv, fixes))), p);
        this.nixl = n[0];
        SiblingHandleWritesAfterFailureScenario.startTwoHandlePull(rig, nixl, p);
        actors(rig.actor("NIXL transfer: R's two READ handles")
                        .worker("handle 0: check_xfer_state ERR (its remote rank is gone)", () -> nixl.failHandle(REQUEST_ID, 0))
                        .worker("handle 1: check_xfer_state ERR (the same peer)", () -> nixl.failHandle(REQUEST_ID, 1))
                        .build(),
                rig.actor("EngineCore busy loop").iteration().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.FAILED_ONCE).and(finished(REQUEST_ID, FINISHED_ERROR), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
