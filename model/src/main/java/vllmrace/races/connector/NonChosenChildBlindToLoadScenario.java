package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;
import static vllmrace.model.sched.RequestStatus.WAITING_FOR_REMOTE_KVS;

import java.util.List;
import vllmrace.model.connector.multi.FencedOffloadingConnector;
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
 * NonChosenChildBlindToLoad: a MultiConnector's offloading child, not chosen to load R, does not record R's blocks, so
 * its reuse fence misses that a block with a pending store job of R2 was just reallocated to R; NIXL's load writes R's KV
 * into the block before the store's copy reads it, and R's KV is stored under R2's key (served on every later hit).
 *
 * <p><b>Upstream.</b> Issue #46951 (open): "the offloading connector currently assumes all block allocations involving
 * async loading are reported in {@code update_state_after_alloc}. This assumption is critical to ensure that no blocks of
 * existing KV transfers are re-allocated to a new request. [...] even with #46865, the offloading connector will not
 * account those blocks (in {@code self._current_batch_allocated_block_ids}) since {@code num_external_tokens == 0}."
 * PR #46865 (merged; multi_connector.py@00f4240e) hands the children MultiConnector did not choose the real blocks with 0
 * tokens (before: empty blocks); the job-based offloading scheduler (a stored copy of offloading/scheduler.py, commit
 * unknown) still returns at {@code if num_external_tokens == 0: return} before recording them. Its
 * {@code request_finished} returns {@code (False, None)} with the store jobs still pending (registered in
 * {@code _block_id_to_pending_jobs}), and {@code build_connector_meta} flushes only the jobs holding a block in
 * {@code _current_batch_allocated_block_ids}; the worker (offloading/worker.py@0078e9d2) submits the deferred stores
 * and waits only for the flushed ones, before the forward; NIXL's READ starts after it ({@code post_forward}). PR #47046
 * (open; #46960 is its duplicate) records the blocks also when {@code num_external_tokens == 0}. The precursor #35092
 * (closed) described the same family: stores racing NIXL's loads on the decode side.
 *
 * <p><b>Set-up and actors.</b> The decode engine's connector is a MultiConnector of NIXL (R's prompt is on the prefill
 * side) and the job-based OffloadingConnector; a pool of ONE block. R2 (local, 3-token prompt, max_tokens 1) ran and
 * finished: the offloader submitted a store job J of R2's block B and returned False, so B was freed at once. R was
 * scheduled next: B reallocated to it, NIXL chosen, its READ into B started; the offloader got (B, 0 tokens) and
 * returned early; the step's fence flushed nothing. Actor 1, the offloader's worker: J's copy of B lands. Actor 2: NIXL's
 * READ of R completes (writes B), two busy-loop iterations (R's finished_recving, R runs and finishes).
 *
 * <pre>
 *   (set-up: R2 finished, J(B) pending, B freed; R got B, NIXL READ into B in flight; no flush: B unrecorded)
 *   actor 1: offloader worker            actor 2: NIXL worker + EngineCore busy loop
 *                                        1. NIXL READ of R completes: R's KV in B
 *   2. J's copy of B lands: it stores
 *      R's KV under R2's key
 *                                        3-4. iterations: finished_recving(R); R runs, finishes
 * </pre>
 *
 * <p>J first, the store copies R2's own KV: clean. The window is the order of the copy and the READ, which nothing
 * orders once the fence missed B. With #47046 the fence sees B at R's allocation and the worker waits for J before the
 * step's forward: J lands before the READ is even posted.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the store job and the READ are worker events, whatever the
 * number of batches in flight.
 *
 * <p><b>Invariant</b> (SC4): a store job reads only its own request's KV: no write of a block's next owner lands before
 * the job's read.
 *
 * <p><b>Verdicts.</b> Reported ({@code OFFLOAD_FENCE_NON_CHOSEN_BLOCKS} off, #46865 on): the store reads R's KV as R2's.
 * Fixed: never. vLLM main: racy (#47046 and #46960 open); without #46865 the offloader gets no blocks at all, racy too.
 */
public final class NonChosenChildBlindToLoadScenario extends RigScenario<ConnectorRig> {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("J copied R2's own KV before NIXL's READ wrote R's into the block (or the fence's wait landed it first); "
                + "R and R2 ended FINISHED_LENGTH_CAPPED") STORED_BEFORE_LOAD,
        @Violating(value = "NIXL's READ wrote R's KV into R2's former block before J's copy read it: R's KV stored under R2's key",
                detectors = {ViolationKind.STORE_READ_OF_FREED_BLOCK}) STORED_AFTER_LOAD;
    }

    /** The scenario at one point of its family: {@code maxTokens}, R2's (default 1; its prompt one token shorter per token more). */
    public NonChosenChildBlindToLoadScenario(FixSet fixes, Configuration config, Params p) {
        this(new Object[2], fixes, config, p);
    }

    private NonChosenChildBlindToLoadScenario(Object[] c, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> {
            NixlDecodeConnector n = new NixlDecodeConnector("NixlConnector", kv, fixes);
            FencedOffloadingConnector o = new FencedOffloadingConnector("OffloadingConnector", kv, fixes);
            c[0] = n;
            c[1] = o;
            return List.of(n, o);
        }), p);
        NixlDecodeConnector nixl = (NixlDecodeConnector) c[0];
        FencedOffloadingConnector offloading = (FencedOffloadingConnector) c[1];
        int r2MaxTokens = p.get("maxTokens", 1, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4 - r2MaxTokens, r2MaxTokens);
        nixl.remotePrefill(REQUEST_ID, 4);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.admit(OTHER_REQUEST_ID, REQUEST_ID);
        for (int i = 0; i < 6 && !nixl.isPullInFlight(REQUEST_ID); i++) {
            rig.runBusyLoopOnce();
        }
        requireSetUp(nixl.isPullInFlight(REQUEST_ID) && rig.request(REQUEST_ID).status() == WAITING_FOR_REMOTE_KVS
                        && rig.request(OTHER_REQUEST_ID).status() == FINISHED_LENGTH_CAPPED,
                "R2 was expected finished and R's READ in flight: " + rig.progressSignature());
        actors(rig.actor("Worker: OffloadingConnector")
                        .worker("OffloadingConnector worker: the store job of R2's block lands (GPU -> CPU copy), unless the "
                                + "fence's wait landed it", () -> offloading.storeCopyLands(OTHER_REQUEST_ID))
                        .build(),
                rig.actor("NIXL worker + EngineCore busy loop")
                        .worker("NixlConnector: NIXL READ of R completes (writes its block)", () -> nixl.completePull(REQUEST_ID))
                        .iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.STORED_BEFORE_LOAD).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED),
                finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
