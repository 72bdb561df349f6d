package vllmrace.races.connector;

import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import java.util.List;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RigScenario;
import vllmrace.races.Violating;

/**
 * ExtraAsyncSavesDedup: positive control: with k async-saving children MultiConnector absorbs the first k-1
 * finished_sending reports and reports the request once, after the last save; its blocks are freed only then.
 *
 * <p><b>Upstream.</b> {@code multi_connector.py}'s {@code _extra_async_saves} (lifecycle §3(b)), as upstream has it.
 *
 * <p><b>Set-up and actors.</b> A MultiConnector of two async-saving children ({@code LMCacheMPConnector},
 * {@code OffloadingConnector}) and a pool of ONE block. R (local, 4 tokens, max_tokens 1) ran and finished:
 * {@code request_finished} got True from both children, so {@code _extra_async_saves[R] = 1} and R's block stays
 * allocated; R2 waits for a block. Actor 1: the worker's LMCache save of R completes. Actor 2: a busy-loop iteration, the
 * Offloading save of R completes, two more iterations.
 *
 * <pre>
 *   actor 1: LMCache worker             actor 2: EngineCore busy loop + Offloading worker    arbiter
 *   (set-up: R finished, 2 saves pending, extra = 1; R2 waits for the block)
 *   1. LMCache save of R completes      1-3. iteration (get_finished: maybe reports R)
 *                                       4. Offloading save of R completes
 *                                       5-10. two iterations: the 2nd report frees B; R2 gets B
 * </pre>
 *
 * <p><b>Scheduler.</b> A positive control under both scheduler classes: the saves complete on worker threads, whatever
 * the number of batches in flight.
 *
 * <p><b>Invariant</b> (CN3, SC4): whatever the order, the first of the two reports is absorbed by the count and only the
 * second reaches the scheduler, so R's block is freed (and given to R2) only after both saves read it; exactly one
 * finished_sending(R).
 *
 * <p><b>Verdicts.</b> No reported variant (a positive control). Fixed: never a violation. vLLM main: clean, upstream as
 * is.
 */
public final class ExtraAsyncSavesDedupScenario extends RigScenario<ConnectorRig> {

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("R's block was freed after both async saves completed; one finished_sending(R); R2 ran") FREED_AFTER_LAST_SAVE,
        @Violating(value = "a save read R's block after it was freed (and maybe given to R2), or a second finished_sending(R)", detectors = {ViolationKind.WRITE_INTO_FREED_BLOCK},
                cascade = {ViolationKind.DUPLICATE_TRANSFER_EVENT, ViolationKind.LATE_TRANSFER_REPORT},
                cascadeWhy = "the early free that lets a save read a freed block also lets the second save's report reach the scheduler") FREED_BEFORE_LAST_SAVE;
    }

    private final LmCacheConnector lmcache;
    private final List<LmCacheConnector> offloading;

    /** The scenario at one point of its family: {@code savingChildren}, the async-saving children (default 2). */
    public ExtraAsyncSavesDedupScenario(FixSet fixes, Configuration config, Params p) {
        this(new LmCacheConnector[p.get("savingChildren", 2, 2)], fixes, config, p);
    }

    private ExtraAsyncSavesDedupScenario(LmCacheConnector[] c, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> {
            c[0] = new LmCacheConnector("LMCacheMPConnector", kv, true, fixes, config);
            for (int i = 1; i < c.length; i++) {
                c[i] = LmCacheConnector.offloader(i == 1 ? "OffloadingConnector" : "OffloadingConnector" + i, kv, fixes, config);
            }
            return List.of(c);
        }), p);
        this.lmcache = c[0];
        this.offloading = List.of(c).subList(1, c.length);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.sendAdd(OTHER_REQUEST_ID, 4, 1);
        rig.admit(REQUEST_ID, OTHER_REQUEST_ID);
        for (int i = 0; i < 4 && !rig.request(REQUEST_ID).isFinished(); i++) {
            rig.runBusyLoopOnce();
        }
        requireSetUp(rig.request(REQUEST_ID).isFinished(), "R did not finish: " + rig.request(REQUEST_ID));
        ConnectorRig.Actor busyLoop = rig.actor("EngineCore busy loop + OffloadingConnector").iteration();
        for (LmCacheConnector child : offloading) {
            busyLoop.worker(child.name() + ": async save of R completes", () -> child.completeSave(REQUEST_ID));
        }
        actors(rig.actor("Worker: LMCacheMPConnector").worker("LMCacheMPConnector: async save of R completes",
                        () -> lmcache.completeSave(REQUEST_ID)).build(),
                busyLoop.iteration().iteration().build());
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.FREED_AFTER_LAST_SAVE).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
