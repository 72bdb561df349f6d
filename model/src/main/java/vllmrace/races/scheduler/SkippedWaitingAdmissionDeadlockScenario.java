package vllmrace.races.scheduler;

import vllmrace.races.Ending;
import static vllmrace.model.sched.RequestStatus.*;

import java.util.List;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * SkippedWaitingAdmissionDeadlock: a request holding no blocks waits ahead of one whose async load holds blocks; when the
 * first becomes schedulable it cannot be allocated, the waiting scan stops there, and the second is never promoted:
 * nothing runs, for ever.
 *
 * <p><b>Upstream.</b> PR #57841 "[BugFix][Scheduler] Avoid Deadlocks in Skipped Waiting under KV Pressure"
 * (robertgshaw2-redhat, open; reproducer on main 9679173788: "200 steps scheduled nothing ... running=0"); the same end
 * state for MTP was fixed by #57104 (merged), and #53130 (open) reports a count-based twin. The waiting loop of
 * scheduler.py@00024d31 re-queues the requests it skipped in scan order and {@code break}s at the first request whose
 * {@code allocate_slots} returns None; an async load holds its blocks and is not in {@code running}, so it is never
 * preempted. #57841's invariant: "a request that holds KV blocks is never behind a request that holds none", enforced at
 * admission: "once the scan passes over a request holding no blocks, no async load is admitted behind it in that step".
 *
 * <p><b>Set-up and actors.</b> A decode-side connector; a pool of 4 blocks. A (3 blocks of prompt) asks the connector
 * first, and a chunk of its prefix is still being written, so the lookup answers None, "ask again later". B (2 blocks) has
 * its prompt on a remote instance. Actor 1: the connector finishes writing A's chunk. Actor 2: the busy loop: an iteration,
 * B's load lands, two more iterations.
 *
 * <pre>
 *   actor 1: connector                       actor 2: EngineCore busy loop + worker        arbiter
 *                                            1-3. schedule(1): A: lookup None -> skipped
 *                                                 (holds nothing); B: async hit -> 2 blocks,
 *                                                 WAITING_FOR_REMOTE_KVS, skipped: waiting [A, B]
 *                                            4. worker: B's load lands
 *   5. A's chunk is written
 *                                            6-8. schedule(2): A: lookup answers; allocate_slots
 *                                                 (3 blocks, 2 free) -> None: break. B is never
 *                                                 reached, its finished_recving never promotes it
 *                                                                                          9. k more iterations: running
 *                                                                                             empty, nothing changes
 * </pre>
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: with the sync {@code Scheduler} (one batch in flight) the
 * client's message or the transfer report still lands while the step in flight executes, as {@code EngineCore.step}
 * runs it; found there too.
 *
 * <p><b>Invariant</b> (LV1): after every transfer completed and k more iterations changed nothing, no request is
 * unfinished.
 *
 * <p><b>Verdicts.</b> Reported ({@code NO_LOAD_BEHIND_BLOCKLESS} off): A's chunk landing after B's admission and before B
 * is promoted shows {@code DEADLOCKED}. Fixed (B's load waits, holding nothing, while A is skipped): never. vLLM main:
 * racy (#57841 is open).
 */
public final class SkippedWaitingAdmissionDeadlockScenario extends SchedulerRaceScenario {
    public static final String BLOCKLESS = "A";
    public static final String LOADING = "B";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("A and B both ran to their length and were freed") COMPLETED,
        @Violating(value = "A cannot be allocated and stops the waiting scan; B holds the blocks A needs and is never reached: "
                + "Running 0 for ever (LV1)", detectors = {ViolationKind.REQUEST_STUCK}) DEADLOCKED;
    }

    /** The scenario at one point of its family (see the race's grid): {@code promptBlocks} scales both prompts and the pool. */
    public SkippedWaitingAdmissionDeadlockScenario(FixSet fixes, Configuration config, Params p) {
        this(fixes, config, p.get("promptBlocks", 1, 1), p);
    }

    private SkippedWaitingAdmissionDeadlockScenario(FixSet fixes, Configuration config, int scale, Params p) {
        super(new EngineCoreRig(fixes, config, SavePolicy.NEVER, 4 * scale), p);
        int bs = EngineCoreRig.BLOCK_SIZE;
        rig.connector().chunkBeingWritten(BLOCKLESS);
        rig.connector().remotePrefill(LOADING, 2 * scale * bs);
        rig.sendAdd(BLOCKLESS, 3 * scale * bs, 1);
        rig.sendAdd(LOADING, 2 * scale * bs, 1);
        rig.admit(BLOCKLESS, LOADING);
        actors(rig.event("connector", "OffloadingConnector: the chunk of A's prefix is written",
                        () -> rig.connector().chunkWritten(BLOCKLESS)),
                rig.busyLoop().iteration().workerTransfersComplete().iteration().iteration().build());
    }

    /** The request whose remote load the deadlock strands: its id is the one a {@code priorUse} point reuses. */
    @Override
    protected String reusedId() {
        return LOADING;
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.COMPLETED).and(finished(BLOCKLESS, FINISHED_LENGTH_CAPPED), finished(LOADING, FINISHED_LENGTH_CAPPED)));
    }
}
