package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.connector.multi.NixlPullProducer;
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
 * LeaseExpiredReadAfterFree: the prefill side's lease on R's blocks expires before the decode side's READ of them; the
 * reaper frees them, R2 gets them, and the late READ copies R2's KV as R's: the decode side decodes on it and the client
 * gets 200.
 *
 * <p><b>Upstream.</b> No upstream issue found; reported downstream: aws-samples/aws-do-eks#84 ("8 of 42 requests ...
 * served on KV blocks the prefill side had already released", the fix there a longer {@code kv_lease_duration}),
 * vllm-project/aibrix#1772, and a comment on vllm#52234 (P reused the blocks, D returned the previous prompt's answer, no
 * failed transfer counted). The lease design is #41383 and #43099. nixl/pull_scheduler.py@0050936b {@code
 * request_finished} leases the blocks ({@code _reqs_need_send[id] = now + kv_lease_duration}, default 30 s) and exports
 * no expiry for an ordinary P-to-D pull ({@code remote_blocks_expiry_time} only {@code if is_d_node}); base_worker.py@d80b52aa's
 * reaper releases an expired lease into {@code done_sending}; pull_worker.py@0316d25a {@code _get_new_notifs} only logs a
 * late READ's notification: "Potentially invalid KV blocks for unrecognized request %s were retrieved by a decode worker.
 * They may have expired." D's READ covers P's registered blocks, so it completes DONE. The only expiry check before a
 * READ is #47021's, for the bidirectional turn-2 read. The suite's proposal extends it to this pull
 * ({@code DECLINE_EXPIRED_REMOTE_READ}: P advertises the expiry, D declines a READ at or after it).
 *
 * <p><b>Set-up and actors.</b> The prefill engine's connector is NIXL in pull mode, {@code kv_lease_duration} 2 worker
 * polls; a pool of ONE block. R (3-token prompt, max_tokens 1, to be decoded remotely) finishes: its block is leased and
 * handed to the decode side; R2 (local) waits for the block. Actor 1, the decode side: its READ of R's block completes
 * (a delayed one: a slow step, a lost heartbeat), its notification joins P's queue. Actor 2: three busy-loop iterations.
 *
 * <pre>
 *   actor 1: decode side                      actor 2: EngineCore busy loop + worker get_finished
 *                                            1. poll t+1: R leased, nothing expired
 *                                            2. poll t+2: reaper: R's lease expired -> done_sending;
 *                                               R's block freed
 *                                            3. schedule: R2 gets the block, its prefill writes it
 *   4. NIXL READ of R's block completes DONE:
 *      it copies R2's KV as R's
 *   5. "R:1" -> P: "Potentially invalid KV
 *      blocks for unrecognized request"
 * </pre>
 *
 * <p>READ first, the actors are clean: the notification releases R at the next poll. Polls first, the READ comes after
 * the block changed hands: the window is the order of the READ and the lease's expiry.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the lease, the reaper and the READ need no step in flight.
 *
 * <p><b>Invariant</b> (SC4): no transfer reads a block after its request's blocks were freed.
 *
 * <p><b>Verdicts.</b> Reported ({@code DECLINE_EXPIRED_REMOTE_READ} off): the late READ copies a freed or reallocated
 * block. Fixed: never (the late READ is declined). vLLM main: racy (no fix upstream; only a longer lease mitigates it).
 */
public final class LeaseExpiredReadAfterFreeScenario extends RigScenario<ConnectorRig> {
    /** {@code kv_lease_duration} in worker polls: it expires within the busy loop's iterations. */
    static final int LEASE_POLLS = 2;

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("the decode side read R's block while R held it (its notification released the lease), or declined the late "
                + "READ; R and R2 ended FINISHED_LENGTH_CAPPED, every block freed") READ_IN_TIME,
        @Violating(value = "the decode side's READ came after R's lease expired: it copied a freed block, or R2's KV, as R's",
                detectors = {ViolationKind.REMOTE_READ_OF_FREED_BLOCK}) READ_AFTER_FREE;
    }

    /** The scenario at one point of its family: {@code maxTokens}, R2's (default 1; its prompt one token shorter per token more). */
    public LeaseExpiredReadAfterFreeScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlPullProducer[1], fixes, config, p);
    }

    private LeaseExpiredReadAfterFreeScenario(NixlPullProducer[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> List.of(n[0] = new NixlPullProducer("NixlConnector", kv, fixes, LEASE_POLLS))), p);
        NixlPullProducer nixl = n[0];
        actors(leaseThenRead(rig, nixl, p, "decode side", "NIXL READ of R's blocks completes DONE; notification \"R:1\" -> P's queue"),
                rig.actor("EngineCore busy loop").iteration().iteration().iteration().build());
    }

    /**
     * R finishes and its one block is leased (R2 waits for it); returns actor 1, the remote side's READ of it (actor 2
     * runs three busy-loop iterations). Shared with BidirectionalTurn2ReadsExpired, whose holder is the decode side.
     */
    static Coroutine<Void> leaseThenRead(ConnectorRig rig, NixlPullProducer nixl, Params p, String reader, String read) {
        finishAndLease(rig, nixl, p);
        return Coroutine.builder(rig.busyLoopEvents(), reader).step(read, () -> nixl.remoteRead(REQUEST_ID)).build();
    }

    /**
     * Set-up shared by the pull side's stories: R (3-token prompt, max_tokens 1) and R2 ({@code maxTokens}, default 1; its
     * prompt one token shorter per token more) are admitted, and the busy loop runs until R finished and is leased.
     */
    static void finishAndLease(ConnectorRig rig, NixlPullProducer nixl, Params p) {
        int r2MaxTokens = p.get("maxTokens", 1, 1);
        rig.sendAdd(REQUEST_ID, 3, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4 - r2MaxTokens, r2MaxTokens);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        for (int i = 0; i < 4 && !nixl.isLeased(REQUEST_ID); i++) {
            rig.runBusyLoopOnce();
        }
        requireSetUp(nixl.isLeased(REQUEST_ID) && rig.request(REQUEST_ID).status() == FINISHED_LENGTH_CAPPED,
                "R was expected finished and leased: " + nixl.progressSignature());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.READ_IN_TIME).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
