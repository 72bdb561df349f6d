package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_ABORTED;

import java.util.List;
import vllmrace.model.connector.multi.NixlPushConsumer;
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
 * PushPostFailureAbortedLeaks: in NIXL push mode the client aborts R while R waits for its prefill ranks' WRITEs, and
 * one rank fails to post its WRITE and only logs it; the aborted R's blocks are held until its finished_recving, which
 * never comes: they leak for the engine's life, though nobody waits for R any more.
 *
 * <p><b>Upstream.</b> Found by this suite's hunt on every profile of vLLM main (connector world, NIXL's decode side in
 * push mode: {@code abort(A), push_post_fails(A)} against three busy-loop iterations). It is PushPostFailureDecodeWaits'
 * lost notification (PR #50754, open) meeting #32255's delayed free (merged): the scheduler frees an aborted request
 * still in WAITING_FOR_REMOTE_KVS only once its load is reported (scheduler.py {@code _free_request}, the
 * {@code finished_recving} path), so the abort that would end PushPostFailureDecodeWaits' wait does not end this one.
 * push_scheduler.py@0316d25a {@code request_finished} drops R's registration watchdog ("the request either completed or
 * was cancelled": {@code _push_registration_deadlines.pop}) and returns {@code False, None}; push_worker.py@8cc02e7f
 * {@code _xfer_blocks}, on a post failure: {@code release_xfer_handle}, {@code record_failed_transfer}, {@code return
 * None}, nothing sent; D reports R only when its notifications reach {@code expected_notifs}. Nothing else frees the
 * blocks: the aborted request is out of the client's sight, so no retry or timeout comes for it. It is the leak issue
 * #46283 (open) describes, an aborted WAITING_FOR_REMOTE_KVS request whose load never reports, with a cause upstream
 * has: two proposals close it. #50754's PUSH_FAIL ({@code PUSH_FAILURE_NOTIFIED}) counts the failure: R is reported
 * with its blocks invalid and freed. #46289's reclaim ({@code RECLAIM_ABORTED_RECV}) frees R after its grace period;
 * here rank 0's WRITE landed before the abort, so nothing writes the block after (where a WRITE still lands after the
 * reclaim, that is the reclaim's own hazard, the hunt's "all" page).
 *
 * <p><b>Set-up and actors.</b> The decode engine's connector is NIXL in push mode; R (4-token prompt, max_tokens 1) is
 * pushed by two prefill ranks; R is admitted and registered (WAITING_FOR_REMOTE_KVS, its block allocated). Actor 1: the
 * prefill ranks and the client: rank 0's WRITE lands, the client aborts R, rank 1 fails to post. Actor 2: two busy-loop
 * iterations.
 *
 * <pre>
 *   actor 1: prefill ranks and the client     actor 2: EngineCore busy loop + worker get_finished
 *   1. rank 0: WRITE lands, "R:2" -> D
 *   2. client: ABORT(R) reaches the input
 *      thread
 *                                            3. _process_input_queue: finish_requests(R): FINISHED_ABORTED;
 *                                               R's load unreported: its block stays (#32255)
 *   4. rank 1: post fails: logged on P,
 *      nothing sent
 *                                            5. get_finished: R 1 of 2; it never reaches 2: R's block held
 *                                               for the engine's life
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: no step's timing is involved.
 *
 * <p><b>Invariant</b> (LV2): a finished request's blocks are freed once nothing can still write them.
 *
 * <p><b>Window.</b> None between the actors: the notification R is owed is never sent, whenever the post fails and
 * whenever the abort lands; the abort only changes a waiting request (PushPostFailureDecodeWaits) into a leaked one.
 *
 * <p><b>Verdicts.</b> Reported ({@code PUSH_FAILURE_NOTIFIED} and {@code RECLAIM_ABORTED_RECV} off, #32255 on): every
 * interleaving leaks R's block. Fixed: R is freed (reported with its blocks invalid, or reclaimed). vLLM main: racy
 * (#50754 and #46289 are open), for a deployment running NIXL in push mode.
 */
public final class PushPostFailureAbortedLeaksScenario extends RigScenario<ConnectorRig> {

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("the aborted R's block was freed: the PUSH_FAIL counted (R reported with its blocks invalid), or the reclaim "
                + "freed it after its grace period") FREED,
        @Violating(value = "the aborted R waits for a second notification that is never sent: FINISHED_ABORTED, its block held "
                + "for the engine's life", detectors = {ViolationKind.REQUEST_LEAKED}) LEAKED;
    }

    /** The scenario at one point of its family ({@code priorUse} only: R's id served once before). */
    public PushPostFailureAbortedLeaksScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlPushConsumer[1], fixes, config, p);
    }

    private PushPostFailureAbortedLeaksScenario(NixlPushConsumer[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> List.of(n[0] = new NixlPushConsumer("NixlPushConnector", kv, fixes))), p);
        NixlPushConsumer nixl = n[0];
        nixl.remotePush(REQUEST_ID, 4, 2);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.admit(REQUEST_ID);
        rig.runBusyLoopOnce();
        requireSetUp(rig.request(REQUEST_ID).status() == RequestStatus.WAITING_FOR_REMOTE_KVS, "R was expected registered: "
                + rig.request(REQUEST_ID));
        actors(rig.actor("prefill side: R's two ranks; the client")
                        .worker("rank 0: WRITE lands in R's block; notification \"R:2\"", () -> nixl.writeLands(REQUEST_ID))
                        .worker("client: ABORT(R) reaches the input thread", () -> rig.abortArrives(REQUEST_ID))
                        .worker("rank 1: _xfer_blocks fails to post: logged, nothing sent", () -> nixl.postFails(REQUEST_ID))
                        .build(),
                rig.actor("EngineCore busy loop").iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.FREED).and(finished(REQUEST_ID, FINISHED_ABORTED)));
    }
}
