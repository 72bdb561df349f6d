package vllmrace.races.scheduler;

import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;
import vllmrace.model.connector.TestAsyncConnector.SavePolicy;
import vllmrace.model.detect.Violation;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.RequestStatus;
import vllmrace.races.Clean;
import vllmrace.races.RaceOutcome;
import vllmrace.races.Violating;

/**
 * AbortedLoadLeak (the leak the #32255 review found; reference §2(c)(iii), K1–K2). A decode-side NIXL connector
 * ({@link SavePolicy#NEVER}). Set-up: R (its prompt on a remote prefill instance) was scheduled, its async load
 * started and landed; iteration 2 ran schedule(2) (R not yet ready). Actor 1: the client's ABORT(R) arrives.
 * Actor 2: update_from_output(2) brings finished_recving(R) (R joins finished_recving_kv_req_ids); iteration 3:
 * {@code _process_input_queue}, schedule(3) promotes R.
 *
 * <p>The race: the ABORT is applied after finished_recving(R) arrived but before schedule(3) promoted R. The
 * PR's first, naive flag delays the free of every aborted WAITING_FOR_REMOTE_KVS request until its
 * finished_recving, which already came: R stays in {@code requests} forever with its blocks (SC5). The review's
 * refinement frees at once when the id is in finished_recving_kv_req_ids.
 */
public final class AbortedLoadLeakScenario extends SchedulerRaceScenario {
    public static final String REQUEST_ID = "R";

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("R aborted (waiting for its recv, after it, or running); its blocks freed exactly once") ABORTED,
        @Violating("R aborted after its finished_recving arrived, free delayed for a report that never comes: "
                + "R stays in requests holding its blocks (SC5)") LEAK,
        @Violating("any other violation or exception: a modelling error, never expected") UNEXPECTED;
    }

    public AbortedLoadLeakScenario(FixSet fixes) {
        super(new EngineCoreRig(fixes, SavePolicy.NEVER, 4));
        rig.connector().remotePrefill(REQUEST_ID, 4);
        rig.sendAdd(REQUEST_ID, 4, 1);
        rig.runBusyLoopOnce(); // ADD applied; schedule(1) starts the async load; update_from_output(1)
        rig.track(REQUEST_ID);
        rig.connector().completeLoad(REQUEST_ID); // the worker's load lands; reported by the next get_finished
        rig.engineCore().processInputQueue();
        if (rig.engineCore().scheduleBatch()) { // schedule(2): R not ready yet; nothing runs, so the loop blocks
            actors(rig.clientAbort(REQUEST_ID), rig.busyLoop().processOldestBatch().iteration().build());
        } else {
            throw new IllegalStateException("set-up: schedule(2) was expected to block on step 2");
        }
    }

    @Override
    public Outcome arbiter() {
        rig.runToQuiescence();
        Set<ViolationKind> kinds = rig.violations().all().stream().map(Violation::kind).collect(Collectors.toSet());
        if (kinds.equals(EnumSet.of(ViolationKind.DELAY_FREED_NEVER_RELEASED, ViolationKind.BLOCK_LEAK)) && !actorFailed()) {
            return Outcome.LEAK;
        }
        if (!rig.violations().isEmpty() || actorFailed() || !rig.allFreed()) {
            return Outcome.UNEXPECTED;
        }
        return rig.request(REQUEST_ID).status() == RequestStatus.FINISHED_ABORTED ? Outcome.ABORTED : Outcome.UNEXPECTED;
    }
}
