package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_ERROR;
import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

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
 * PushPostFailureDecodeWaits: in NIXL push mode one prefill rank fails to post its WRITE of R and only logs it; the
 * decode side counts completion notifications toward a number it never reaches, and R waits in WAITING_FOR_REMOTE_KVS
 * holding half-written blocks.
 *
 * <p><b>Upstream.</b> PR #50754 (open), row C2 of the push-mode reliability inventory #48633: "If the prefill node cannot
 * start one of those transfers it just logs and moves on, so the decode node counts toward a number it never reaches.
 * The request hangs until its lease expires while holding blocks over a half-written cache." push_worker.py@8cc02e7f
 * {@code _xfer_blocks}, on a post failure: {@code release_xfer_handle}, {@code record_failed_transfer}, {@code return
 * None}; D's {@code _get_new_notifs} (@039e79a6) reports R only once {@code consumer_notification_counts_by_req[R]}
 * reaches {@code expected_notifs = pp_size * max(1, P_TP // D_TP)}. D's registration watchdog only drops the
 * registration ("the engine layer will eventually time it out via the lease"); the model runs no such timeout. The fix
 * sends PUSH_FAIL in place of the completion, which counts and fails the request ({@code PUSH_FAILURE_NOTIFIED}).
 *
 * <p><b>Set-up and actors.</b> The decode engine's connector is NIXL in push mode; the prefill side has two TP ranks to
 * this side's one, so R expects two notifications. A pool of ONE block; R (4-token prompt, max_tokens 1, pushed) and R2
 * (local, waiting for the block) are added; one busy-loop iteration allocates R's block and registers it (PUSH_REG).
 * Actor 1, the prefill side: rank 0's WRITE lands and notifies; rank 1's post fails. Actor 2: two busy-loop iterations.
 *
 * <pre>
 *   actor 1: prefill ranks                    actor 2: EngineCore busy loop + worker get_finished
 *   1. rank 0: WRITE lands, "R:2" -> D
 *                                            2. _get_new_notifs: R 1 of 2
 *   3. rank 1: post fails: logged on P,
 *      nothing sent
 *                                            4. get_finished: R still 1 of 2; R stays
 *                                               WAITING_FOR_REMOTE_KVS holding its block; R2 waits
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: no step's timing is involved.
 *
 * <p><b>Invariant</b> (LV1): a request waiting for remote KV gets a completion or a failure for every transfer it waits for.
 *
 * <p><b>Window.</b> None between the actors: the notification R is owed is never sent, whenever the post fails; only an
 * event the model does not run (a timeout) would end it.
 *
 * <p><b>Verdicts.</b> Reported ({@code PUSH_FAILURE_NOTIFIED} off): every interleaving leaves R waiting. Fixed: R fails
 * (FINISHED_ERROR) and R2 runs. vLLM main: racy (#50754 is open), for a deployment running NIXL in push mode.
 */
public final class PushPostFailureDecodeWaitsScenario extends RigScenario<ConnectorRig> {

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("the PUSH_FAIL counted: R failed (FINISHED_ERROR) with its blocks invalid, R2 got the block and ran") FAILED_OVER,
        @Violating(value = "R waits for a second notification that is never sent: WAITING_FOR_REMOTE_KVS for ever, holding its "
                + "half-written block (R2 waits too)", detectors = {ViolationKind.REQUEST_STUCK}) DECODE_WAITS;
    }

    /** The scenario at one point of its family: {@code maxTokens}, R2's (default 1; its prompt one token shorter per token more). */
    public PushPostFailureDecodeWaitsScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlPushConsumer[1], fixes, config, p);
    }

    private PushPostFailureDecodeWaitsScenario(NixlPushConsumer[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> List.of(n[0] = new NixlPushConsumer("NixlPushConnector", kv, fixes))), p);
        NixlPushConsumer nixl = n[0];
        int r2MaxTokens = p.get("maxTokens", 1, 1);
        nixl.remotePush(REQUEST_ID, 4, 2);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 5 - r2MaxTokens, r2MaxTokens);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        rig.runBusyLoopOnce();
        requireSetUp(rig.request(REQUEST_ID).status() == RequestStatus.WAITING_FOR_REMOTE_KVS, "R was expected registered: "
                + rig.request(REQUEST_ID));
        actors(rig.actor("prefill side: R's two ranks")
                        .worker("rank 0: WRITE lands in R's block; notification \"R:2\"", () -> nixl.writeLands(REQUEST_ID))
                        .worker("rank 1: _xfer_blocks fails to post: logged, nothing sent", () -> nixl.postFails(REQUEST_ID))
                        .build(),
                rig.actor("EngineCore busy loop").iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.FAILED_OVER).and(finished(REQUEST_ID, FINISHED_ERROR), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
