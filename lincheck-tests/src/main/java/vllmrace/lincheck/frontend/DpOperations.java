package vllmrace.lincheck.frontend;

import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.dp.DpDeployment;
import vllmrace.model.fix.FixSet;

/**
 * The data-parallel part of the frontend check: a client's requests, {@code pause_generation}, {@code resume_generation},
 * the ranks' lockstep busy-loop iteration, and {@code wait_for_requests_to_drain} once the ranks are quiescent, over one
 * {@link DpDeployment}, against {@link DpSpecification}. {@link #noDetectorFired()} validates LV4 (no rank steps without
 * its peers) after every part.
 */
public class DpOperations {
    private static volatile FixSet fixes = FixSet.all();
    private static volatile Configuration configuration = Configuration.DEFAULT;
    private static final int QUIESCENCE_ITERATIONS = 8;

    private final DpDeployment dp;
    private int requests;

    public DpOperations() {
        RunRecorder.countInvocation();
        dp = new DpDeployment(fixes, configuration);
    }

    static void configure(FixSet fixes, Configuration configuration) {
        DpOperations.fixes = fixes;
        DpOperations.configuration = configuration;
    }

    /** {@code DPAsyncMPClient.add_request_async} of a one-token request (ADD, and FIRST_REQ when no wave runs). */
    @Operation
    public void addRequest() {
        String id;
        synchronized (this) {
            id = "R" + requests++;
        }
        dp.addRequest(id, 1);
    }

    /** {@code AsyncLLM.pause_generation(mode="abort")}. */
    @Operation
    public void pause() {
        dp.pauseGeneration();
    }

    /**
     * {@code AsyncLLM.resume_generation}: "resumed", or "refused" while a pause has not reached the ranks' consensus (a
     * client still awaiting its {@code pause_generation} cannot resume; another task's resume is refused).
     */
    @Operation(nonParallelGroup = "ranks")
    public String resume() {
        try {
            dp.resumeGeneration();
            return "resumed";
        } catch (IllegalStateException pauseInFlight) {
            return "refused";
        }
    }

    /** One lockstep busy-loop iteration of the ranks. */
    @Operation(nonParallelGroup = "ranks")
    public void ranksStep() {
        dp.iterate();
    }

    /**
     * The ranks run until none steps, the coordinator publishes; then {@code wait_for_requests_to_drain}'s poll:
     * true when it returns ({@code not dp_engines_running()}).
     */
    @Operation(nonParallelGroup = "ranks")
    public boolean drainAfterQuiescence() {
        for (int i = 0; i < QUIESCENCE_ITERATIONS && dp.iterate(); i++) {
            // lockstep iterations until no rank steps
        }
        dp.publishToClient();
        return !dp.clientEnginesRunning();
    }

    @Validate
    public void noDetectorFired() {
        if (!dp.violations().isEmpty()) {
            throw new IllegalStateException("invariant broken: " + dp.violations());
        }
    }
}
