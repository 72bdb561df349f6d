package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

import java.util.List;
import vllmrace.model.connector.multi.NixlPushProducer;
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
 * PushSendNeverReported: on the prefill side of NIXL push mode, every WRITE of R's KV into the decode side completes,
 * but the worker never reports R in {@code finished_sending}: R's source blocks stay held until its lease expires, and
 * the request waiting for them waits with it.
 *
 * <p><b>Upstream.</b> PR #58188 ("[Bugfix][NIXL] Restore successful push completion reporting", open): "successful NIXL
 * push WRITEs are filtered through {@code _recving_metadata}, which tracks incoming requests. Ordinary producer requests
 * have no entry there, so they never report {@code finished_sending} ... and retain source KV blocks until lease expiry."
 * A regression of #56104 (merged; the {@code _recv_failures} rework of SiblingHandleWritesAfterFailure), on which njhill
 * warned it "may introduce some problems on the push side". Before #56104 ({@code push_worker.py@8cc02e7f}
 * {@code get_finished}) every push {@code _pop_done_transfers} returns is reported. The fix's shape
 * ({@code push_worker.py@039e79a6}): a push is reported when all its WRITE handles are released, none failed, and it is
 * still leased ({@code PUSH_SEND_REPORTED_PER_DIRECTION}). The filter line itself was read only in a copy whose commit
 * is unknown; the model follows the PR's description.
 *
 * <p><b>Set-up and actors.</b> The prefill engine's connector is the NIXL push producer; a pool of ONE block. R (3-token
 * prompt, max_tokens 1, to be decoded remotely) and R2 (local) are added; the busy loop runs R to FINISHED_LENGTH_CAPPED:
 * {@code request_finished} leases its block (delay_free, {@code kv_lease_duration} = {@value
 * vllmrace.model.connector.multi.NixlPushProducer#LEASE_POLLS} worker polls here) and R2 waits for it. D's PUSH_REG
 * arrived: the writer thread posted one WRITE per D rank, two. Actor 1, the NIC: both WRITEs complete. Actor 2: two
 * busy-loop iterations (each polls {@code get_finished}). The arbiter runs the engine on until the lease expires.
 *
 * <pre>
 *   actor 1: NIC, R's two WRITE handles      actor 2: EngineCore busy loop + worker get_finished     arbiter
 *   1. handle 0: DONE (read R's block)
 *   2. handle 1: DONE
 *                                            3. get_finished: _pop_done_transfers pops R (no handle
 *                                               left) ... done_pushing filtered by _recving_metadata:
 *                                               R is not there (P receives nothing): dropped
 *                                            4. get_finished: R is in no list any more
 *                                                                                          5. polls until R's lease
 *                                                                                             expires: the reaper puts R
 *                                                                                             in done_sending; R2 runs
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: no step's timing is involved.
 *
 * <p><b>Invariant</b> (CN1): a transfer's completion reaches the scheduler; only a transfer that never completes is
 * released by its lease.
 *
 * <p><b>Window.</b> None between the actors: the report R is owed is dropped whenever its WRITEs complete, so every
 * schedule shows it; the lease's expiry is what ends it. The three report directions of SiblingHandleWritesAfterFailure's
 * #56104 meet here: report a failure at the first ERR (the sibling's write into a freed block), after every handle but
 * through the receive metadata (this), after every handle per direction (#58188: clean).
 *
 * <p><b>Verdicts.</b> Reported ({@code PUSH_SEND_REPORTED_PER_DIRECTION} off, #56104 on): every interleaving holds R's
 * block to the lease's expiry. Fixed: never. vLLM main: racy (#58188 is open), for a deployment running NIXL in push
 * mode; the pull mode's producer is not this code.
 */
public final class PushSendNeverReportedScenario extends RigScenario<ConnectorRig> {

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("R's push was reported in finished_sending once its WRITEs completed: R's block freed, R2 got it and ran") REPORTED,
        @Violating(value = "R's WRITEs completed but finished_sending never named R: its block was held until the lease expired "
                + "(R2 waited for it)", detectors = {ViolationKind.SEND_COMPLETION_NEVER_REPORTED}) HELD_TO_LEASE_EXPIRY;
    }

    private final NixlPushProducer push;

    /** The scenario at one point of its family: {@code maxTokens}, R2's (default 1; its prompt one token shorter per token more). */
    public PushSendNeverReportedScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlPushProducer[1], fixes, config, p);
    }

    private PushSendNeverReportedScenario(NixlPushProducer[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> List.of(n[0] = new NixlPushProducer("NixlPushConnector", kv, fixes))), p);
        this.push = n[0];
        int r2MaxTokens = p.get("maxTokens", 1, 1);
        rig.sendAdd(REQUEST_ID, 3, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4 - r2MaxTokens, r2MaxTokens);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        for (int i = 0; i < 4 && !push.isLeased(REQUEST_ID); i++) {
            rig.runBusyLoopOnce();
        }
        requireSetUp(push.isLeased(REQUEST_ID) && rig.request(REQUEST_ID).status() == FINISHED_LENGTH_CAPPED,
                "R was expected finished and leased: " + rig.request(REQUEST_ID));
        push.postWrites(REQUEST_ID, 2);
        actors(rig.actor("NIC: R's two WRITE handles")
                        .worker("handle 0: check_xfer_state DONE (read R's block into D rank 0)", () -> push.completeWrite(REQUEST_ID, 0))
                        .worker("handle 1: check_xfer_state DONE (read R's block into D rank 1)", () -> push.completeWrite(REQUEST_ID, 1))
                        .build(),
                rig.actor("EngineCore busy loop").iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.REPORTED).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
