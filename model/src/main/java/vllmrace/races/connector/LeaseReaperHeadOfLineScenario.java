package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
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
 * LeaseReaperHeadOfLine: on the prefill side, a heartbeat renews the lease at the head of the NIXL worker's lease map in
 * place; the reaper stops at that live head, and the expired lease behind it is not released: its blocks stay held.
 *
 * <p><b>Upstream.</b> Issue #58222 ("[Bug] NIXL lease reaper strands expired KV blocks behind a heartbeated head entry",
 * open, against v0.27.1) and PR #50789 ("Fix/nixl lease reaper ordering", open): the reaper "reclaims expired KV leases
 * by inspecting only the head of {@code _reqs_to_send} and breaking at the first unexpired entry"; "heartbeats renew in
 * place", so the map is not ordered by expiry, and "the blocks are never released. On P that also holds the associated
 * request-plane slot". base_worker.py@d80b52aa {@code get_transfer_results}: {@code _get_new_notifs} handles the
 * heartbeat ({@code _handle_heartbeat}: {@code self._reqs_to_send[req_id] = max(old, new_expiry)}), then the reaper
 * ({@code if now < expires: break}, "Sorted dict, oldest requests are put first so we can exit early"). The fix scans
 * every lease ({@code _reap_expired_send_leases} in a stored base_worker.py@039e79a6; {@code REAP_EVERY_EXPIRED_LEASE}).
 * #50789 names a second trigger the model leaves out: a 480 s bidirectional entry ahead of 30 s leases.
 *
 * <p><b>Set-up and actors.</b> The prefill engine's connector is the NIXL push producer, {@code kv_lease_duration} 3
 * worker polls (its extension {@code 3 * 2 // 3} = 2). R and R2 (3-token prompts, max_tokens 1) finish in the same step:
 * {@code request_finished} leases both, R first, both to expire at poll t+3. R2's decode side has gone; R's is alive,
 * waiting for its KV, and heartbeats R. Actor 1: D's {@code "HB:R"} arrives in the worker's notification queue. Actor 2:
 * three busy-loop iterations (each polls {@code get_finished} once: t+1, t+2, t+3).
 *
 * <pre>
 *   actor 1: R's decode side                   actor 2: EngineCore busy loop + worker get_finished
 *                                              1. poll t+1: nothing expired
 *   2. "HB:R" arrives
 *                                              3. poll t+2: _handle_heartbeat: R expires at t+4 (in place,
 *                                                 still the head)
 *                                              4. poll t+3: reaper: head R live -> break; R2 expired
 *                                                 at t+3 stays in _reqs_to_send, its block held
 * </pre>
 *
 * <p>Run one after the other the actors are clean: a heartbeat handled at t+1 extends nothing ({@code max(t+3, t+3)}),
 * and one after poll t+3 finds both leases reaped.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the worker's polls and the heartbeat need no step in flight.
 *
 * <p><b>Invariant</b> (SC5): an expired lease is released at the first poll that sees it expired.
 *
 * <p><b>Verdicts.</b> Reported ({@code REAP_EVERY_EXPIRED_LEASE} off): some interleaving strands R2's lease. Fixed:
 * never. vLLM main: racy (#50789 is open).
 */
public final class LeaseReaperHeadOfLineScenario extends RigScenario<ConnectorRig> {
    /** {@code kv_lease_duration} in worker polls: its two-thirds extension outlasts the lease only in its last poll. */
    static final int LEASE_POLLS = 3;

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("every expired lease was released at the poll that saw it expire; R and R2 ended FINISHED_LENGTH_CAPPED, "
                + "their blocks freed") REAPED,
        @Violating(value = "R2's lease expired behind R's renewed one and the reaper stopped at R: R2's block stayed held",
                detectors = {ViolationKind.LEASE_EXPIRED_NOT_RELEASED}) STRANDED;
    }

    private final NixlPushProducer push;

    /** The scenario at one point of its family: {@code maxTokens}, R2's (default 1; its prompt one token shorter per token more). */
    public LeaseReaperHeadOfLineScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlPushProducer[1], fixes, config, p);
    }

    private LeaseReaperHeadOfLineScenario(NixlPushProducer[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 2, kv -> List.of(n[0] = new NixlPushProducer("NixlPushConnector", kv, fixes, LEASE_POLLS))), p);
        this.push = n[0];
        rig.sendAdd(REQUEST_ID, 3, 1);
        int r2MaxTokens = p.get("maxTokens", 1, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4 - r2MaxTokens, r2MaxTokens);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        for (int i = 0; i < 4 && !push.isLeased(OTHER_REQUEST_ID); i++) {
            rig.runBusyLoopOnce();
        }
        requireSetUp(push.isLeased(REQUEST_ID) && push.isLeased(OTHER_REQUEST_ID), "R and R2 were expected leased: "
                + push.progressSignature());
        Coroutine<Void> decode = Coroutine.builder(rig.busyLoopEvents(), "R's decode side")
                .step("_send_heartbeats: \"HB:R\" -> P's notification queue", () -> push.heartbeat(REQUEST_ID))
                .build();
        actors(decode, rig.actor("EngineCore busy loop").iteration().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.REAPED).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
