package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

import java.util.List;
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
 * BidirectionalTurn2ReadsExpired: with bidirectional KV transfer the decode side holds R's blocks for the prefill side's
 * turn-2 READ under a fixed TTL; it expires first, the blocks go to R2, and the prefill side's READ copies R2's KV as
 * R's conversation.
 *
 * <p><b>Upstream.</b> PR #47021 ("[NIXL] Avoid reading expired blocks in bidirectional turn-2 read", merged): on turn 1 D
 * pins R's blocks with {@code decoder_kv_blocks_ttl} (480 s by default) for P to read on turn 2; the TTL is not extended
 * by heartbeats ("heartbeats are effectively disabled for Bidirectional KV transfer", base_scheduler.py@0050936b), so a
 * slow turn 2 reads blocks D already reused. The fix: "D adds its timestamp to the handshake (Bumps
 * NIXL_CONNECTOR_VERSION 4 -> 5); P calculates a time offset with D; D submits the blocks expiration time in the
 * kv_transfer_params; If P sees that the blocks are about to become invalid ... it declines" (pull_worker.py@d80b52aa:
 * {@code if self._bidirectional_kv_xfer_enabled and self._is_turn2_read_expired(meta)}; {@code TURN2_READ_EXPIRY_CHECK}).
 * The same shape with the roles swapped is LeaseExpiredReadAfterFree, for which no such check exists.
 *
 * <p><b>Set-up and actors.</b> The decode engine's connector is NIXL with bidirectional transfer,
 * {@code decoder_kv_blocks_ttl} 2 worker polls; a pool of ONE block. R (3-token prompt, max_tokens 1) finishes its turn
 * 1 on the decode side: its block is held for the prefill side's turn-2 READ; R2 (local) waits for the block. Actor 1,
 * the prefill side: its turn-2 READ of R's block completes. Actor 2: three busy-loop iterations on the decode side.
 *
 * <pre>
 *   actor 1: prefill side, turn 2             actor 2: decode EngineCore busy loop + worker get_finished
 *                                            1. poll t+1: nothing expired
 *                                            2. poll t+2: reaper: R's TTL expired -> done_sending; R's
 *                                               block freed
 *                                            3. schedule: R2 gets the block
 *   4. turn-2 NIXL READ of R's block completes:
 *      it copies R2's KV as R's history
 * </pre>
 *
 * <p>READ first, the actors are clean: its notification releases R's block at the next poll. Polls first, the READ
 * comes after the block changed hands: the window is the order of the READ and the TTL's expiry.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the TTL, the reaper and the READ need no step in flight.
 *
 * <p><b>Invariant</b> (SC4): no transfer reads a block after its request's blocks were freed.
 *
 * <p><b>Verdicts.</b> Reported ({@code TURN2_READ_EXPIRY_CHECK} off): the late turn-2 READ copies a freed or reallocated
 * block. Fixed: never (the READ is declined near the expiry). vLLM main: closed, by #47021.
 */
public final class BidirectionalTurn2ReadsExpiredScenario extends RigScenario<ConnectorRig> {
    /** {@code decoder_kv_blocks_ttl} in worker polls: it expires within the busy loop's iterations. */
    static final int TTL_POLLS = 2;

    /** How one run ended, checked in this order. */
    public enum Outcome implements RaceOutcome {
        @Clean("the prefill side read R's block while the decode side held it, or declined the late READ; R and R2 ended "
                + "FINISHED_LENGTH_CAPPED, every block freed") READ_IN_TIME,
        @Violating(value = "the turn-2 READ came after the decode side's TTL expired: it copied a freed block, or R2's KV, as R's",
                detectors = {ViolationKind.REMOTE_READ_OF_FREED_BLOCK}) READ_AFTER_EXPIRY;
    }

    /** The scenario at one point of its family: {@code maxTokens}, R2's (default 1; its prompt one token shorter per token more). */
    public BidirectionalTurn2ReadsExpiredScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlPullProducer[1], fixes, config, p);
    }

    private BidirectionalTurn2ReadsExpiredScenario(NixlPullProducer[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> List.of(n[0] = new NixlPullProducer("NixlConnector", kv, fixes, TTL_POLLS, true))), p);
        actors(LeaseExpiredReadAfterFreeScenario.leaseThenRead(rig, n[0], p, "prefill side, turn 2",
                        "turn-2 NIXL READ of R's blocks completes DONE; notification -> the decode side's queue"),
                rig.actor("EngineCore busy loop").iteration().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.READ_IN_TIME).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
