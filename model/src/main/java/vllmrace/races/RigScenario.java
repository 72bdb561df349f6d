package vllmrace.races;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import vllmrace.model.sched.RequestStatus;

/**
 * A race scenario over one EngineCore rig ({@link EngineRig}): the rig's step log and detectors are the scenario's, the
 * shared arbiter settles the rig to quiescence before it judges, and every clean ending includes "every block back".
 * The facts a clean ending declares per request are here: {@link #finished} (status, finish reasons, request_finished
 * once), {@link #status}, {@link #reasons}.
 */
public abstract class RigScenario<R extends EngineRig> extends TwoActorScenario {
    /** The request each rig story is about. */
    public static final String REQUEST_ID = "R";
    /** The second request of a story that has one: it gets the blocks R frees. */
    public static final String OTHER_REQUEST_ID = "R2";

    protected final R rig;

    /** The family dimension every rig story has: 1 serves an earlier request under the story's own id first. */
    public static final String PRIOR_USE = "priorUse";

    /**
     * A story over {@code rig} at one point of its family. At {@code priorUse=1} an earlier request under the story's id
     * ({@link #reusedId()}) is served to its end and the engine settled before the story's set-up begins
     * ({@link EngineRig#servePrior}): the engine id reused, as a deployment that passes client ids through unrandomized
     * sends it, so every per-id record the scheduler and the connectors keep has seen the id once already.
     */
    protected RigScenario(R rig, Params p) {
        super(Objects.requireNonNull(rig, "rig"));
        this.rig = rig;
        if (p.get(PRIOR_USE, 0, 0) == 1) {
            rig.servePrior(reusedId());
        }
    }

    /** The id a {@code priorUse} point serves first: the story's request (called before the subclass's set-up). */
    protected String reusedId() {
        return REQUEST_ID;
    }

    public R rig() {
        return rig;
    }

    /** Every transfer the environment will deliver is delivered and the busy loop settles ({@link EngineRig#runToQuiescence}). */
    @Override
    protected void settle() {
        rig.runToQuiescence();
    }

    @Override
    protected final List<Ending.Fact> baseFacts() {
        return List.of(new Ending.Fact("the scheduler holds nothing and every block is back in the pool", rig::allFreed));
    }

    /**
     * {@code requestId} ended in one of {@code statuses}, EngineCore sent the finish reason that status sends ("length",
     * "stop"; none for an abort) once, and the connector's {@code request_finished} ran once for it.
     */
    protected final Ending.Fact finished(String requestId, RequestStatus... statuses) {
        Set<RequestStatus> allowed = Set.of(statuses);
        return new Ending.Fact(requestId + " ended " + allowed + ", its finish reason sent once, request_finished once", () -> {
            RequestStatus s = rig.request(requestId).status();
            return allowed.contains(s) && Objects.equals(finishReasonOf(s), rig.finishReasons(requestId))
                    && rig.storyRequestFinishedCalls(requestId) == 1;
        });
    }

    /** {@code requestId}'s Request ended in one of {@code statuses} (nothing said of its outputs: its id may be shared). */
    protected final Ending.Fact status(String requestId, RequestStatus... statuses) {
        Set<RequestStatus> allowed = Set.of(statuses);
        return new Ending.Fact(requestId + " ended " + allowed, () -> allowed.contains(rig.request(requestId).status()));
    }

    /** EngineCore sent exactly these finish reasons under {@code requestId}, comma-joined (an id two requests share). */
    protected final Ending.Fact reasons(String requestId, String... reasons) {
        String joined = String.join(",", reasons);
        return new Ending.Fact("EngineCore sent " + Arrays.toString(reasons) + " under " + requestId,
                () -> joined.equals(rig.finishReasons(requestId)));
    }

    /** The finish reason EngineCore sends for a request that ends in {@code status}: none for an abort (the client asked). */
    private static String finishReasonOf(RequestStatus status) {
        return status == RequestStatus.FINISHED_ABORTED ? null : RequestStatus.getFinishedReason(status);
    }
}
