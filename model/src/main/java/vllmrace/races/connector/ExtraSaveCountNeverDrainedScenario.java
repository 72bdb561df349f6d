package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

import java.util.List;
import vllmrace.model.connector.multi.NixlPullProducer;
import vllmrace.model.connector.multi.OffloadingConnector;
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
 * ExtraSaveCountNeverDrained: on a prefill engine with replicated prefill context parallelism, a MultiConnector of NIXL
 * and an offloader counts two async saves of R on every rank, but NIXL on rank 1 never reports R: rank 1's one report
 * (the offloader's) is absorbed by the extra-save count, the aggregator waits for a report from every rank, and R's
 * blocks are never freed; the next request waits for them for ever.
 *
 * <p><b>Upstream.</b> PR #53903 (merged): "[NIXL][PCP] Report replicated-PCP ranks > 0 as done sending instead of hiding
 * them". #52779 made a NIXL producer on PCP rank > 0 clear {@code done_sending} (only rank 0 serves the decode side's
 * READs) and lowered NIXL's {@code get_finished_count()} to TP x PP, so the aggregator waits for rank 0 only. Wrapped in
 * a MultiConnector with a sibling that saves on every rank, both halves break: multi_connector.py@00f4240e
 * {@code get_finished_count} returns None when any child does (the offloader inherits the base's None), so
 * {@code KVOutputAggregator.from_connector} expects {@code world_size} reports; and {@code _extra_async_saves[R] = 1}
 * absorbs the first report of R on each worker, whichever child sends it. #53903 reports the requests to send as
 * finished on a rank > 0 when the metadata arrives, and restores the world-size count. Its report: GLM-5.2-FP8 PCP8,
 * NIXL producer + OffloadingConnector, "14/35 requests completed at concurrency 16, then nothing", the engine at
 * "Running: 0 reqs, Waiting: N reqs" with the KV cache full.
 *
 * <p><b>Set-up and actors.</b> The prefill engine, PCP size 2 (world size 2), a MultiConnector of NIXL in pull mode
 * (a long lease) and an OffloadingConnector; a pool of ONE block. R (3-token prompt, max_tokens 1, to be decoded
 * remotely) finished: NIXL leased its block and handed it to the decode side, the offloader started a store of it on
 * each rank, both returned True, so {@code _extra_async_saves[R] = 1}; R2 (local) waits for the block. Actor 1, the
 * decode side and rank 1's offloader: the decode side's READ of R's block completes, then rank 1's store. Actor 2: a
 * busy-loop iteration (both workers poll), rank 0's store completes, three more iterations.
 *
 * <pre>
 *   actor 1: decode side + rank-1 offloader     actor 2: EngineCore busy loop + rank-0 offloader
 *   1. NIXL READ of R completes; "R:1" -> P      1. iteration: rank 0 and rank 1 poll
 *   2. rank 1's store of R completes             2. rank 0's store of R completes
 *                                                3-5. iterations: rank 0: NIXL's R (absorbed: extra 1 -> gone),
 *                                                     then the offloader's R -> reported (1 of 2);
 *                                                     rank 1: NIXL reports nothing (done_sending cleared),
 *                                                     the offloader's R is absorbed (its extra 1 -> gone)
 *   arbiter: every transfer done, R's count at 1 of 2: R finished, holding the block; R2 waits for ever
 * </pre>
 *
 * <p>At the family's id-reuse point the earlier request under R is served locally (no {@code do_remote_decode}): only the
 * offloader saves it, one save per rank, no extra count; each rank's report completes the count, as upstream.
 *
 * <p>Every order loses the same report: rank 1 has one report of R to give and the count absorbs it. With #53903 rank 1's
 * NIXL reports R at the metadata's arrival (the first iteration), the offloader's report completes rank 1's pair, and
 * the aggregator frees R after both ranks.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the reports are counted whatever the number of batches in
 * flight.
 *
 * <p><b>Invariant</b> (SC5, LV1): a finished request whose every transfer completed is freed (each worker reports it
 * once), and a waiting request that fits the pool once it is freed runs.
 *
 * <p><b>Verdicts.</b> Reported ({@code PCP_REPLICA_REPORTS_SENT} off): R is never freed, R2 never runs. Fixed: R is freed
 * after both ranks reported, R2 runs. vLLM main: closed (#53903 merged).
 */
public final class ExtraSaveCountNeverDrainedScenario extends RigScenario<ConnectorRig> {
    /** The prefill context parallel size: rank 0 serves the decode side, rank 1 holds a replica. */
    static final int PCP_SIZE = 2;
    /** {@code kv_lease_duration} in worker polls: longer than the actors run. */
    static final int LEASE_POLLS = 8;

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("both ranks reported R once: the aggregator freed R's block, R2 ran; R and R2 ended FINISHED_LENGTH_CAPPED")
        FREED_AFTER_EVERY_RANK,
        @Violating(value = "rank 1's one report of R was absorbed by the extra-save count and NIXL there never reports: R's "
                + "block is never freed (held by a finished request nothing will release), and R2 waits for it for ever",
                detectors = {ViolationKind.DELAY_FREED_NEVER_RELEASED, ViolationKind.BLOCK_LEAK, ViolationKind.REQUEST_STUCK})
        NEVER_FREED;
    }

    /** The scenario at one point of its family: {@code maxTokens}, R2's (default 1; its prompt one token shorter per token more). */
    public ExtraSaveCountNeverDrainedScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlPullProducer[1], new OffloadingConnector[1], fixes, config, p);
    }

    private ExtraSaveCountNeverDrainedScenario(NixlPullProducer[] n, OffloadingConnector[] o, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, PCP_SIZE, kv -> {
            n[0] = new NixlPullProducer("NixlConnector", kv, fixes, LEASE_POLLS, false, PCP_SIZE);
            if (p.get(PRIOR_USE, 0, 0) == 1) {
                n[0].decodeLocally(REQUEST_ID); // the earlier request under R was served locally: only the offloader saved it
            }
            return List.of(n[0], o[0] = new OffloadingConnector("OffloadingConnector", kv, PCP_SIZE));
        }), p);
        NixlPullProducer nixl = n[0];
        OffloadingConnector offloading = o[0];
        LeaseExpiredReadAfterFreeScenario.finishAndLease(rig, nixl, p);
        requireSetUp(offloading.hasPendingTransfer(REQUEST_ID), "R was expected being stored: " + offloading.progressSignature());
        actors(rig.actor("Decode side + OffloadingConnector rank 1")
                        .worker("decode side: NIXL READ of R's block completes DONE; notification \"R:1\" -> P's queue",
                                () -> nixl.remoteRead(REQUEST_ID))
                        .worker("OffloadingConnector, PCP rank 1: the store of R completes", () -> offloading.completeStore(1, REQUEST_ID))
                        .build(),
                rig.actor("EngineCore busy loop + OffloadingConnector rank 0").iteration()
                        .worker("OffloadingConnector, PCP rank 0: the store of R completes", () -> offloading.completeStore(0, REQUEST_ID))
                        .iteration().iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.FREED_AFTER_EVERY_RANK).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED),
                finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
