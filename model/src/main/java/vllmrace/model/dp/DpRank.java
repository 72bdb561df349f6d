package vllmrace.model.dp;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import vllmrace.model.EngineProcess;
import vllmrace.model.engine.EngineCoreMessage;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.model.sched.Request;
import vllmrace.model.sched.RequestStatus;

/**
 * Mirrors {@code vllm/v1/engine/core.py}, {@code DPEngineCoreProc}: one data-parallel rank's wave state
 * ({@code engines_running}, {@code current_wave}), its pause ({@code pause_scheduler(mode="abort")}; with
 * {@link Fix#DP_TWO_PHASE_PAUSE} #39366's {@code pending_pause} and {@code ignore_start_dp_wave}) and its handling of
 * ADD and {@code START_DP_WAVE}, over its own EngineCore. While paused, a new request is held ({@code PAUSED_NEW}: not
 * scheduled, not counted as unfinished) until resume. {@code START_DP_WAVE} waits in the rank's input until its next
 * busy-loop iteration; an ADD is applied at once (its input thread).
 */
public final class DpRank {
    private final int index;
    private final FixSet fixes;
    private final EngineProcess engine;
    private final Deque<int[]> startWaves = new ArrayDeque<>(); // {wave, exclude or -1}
    private final Deque<EngineCoreRequest> held = new ArrayDeque<>();
    private boolean enginesRunning;
    private int currentWave;
    private boolean paused;
    private boolean pendingPause;
    private boolean ignoreStartDpWave;

    DpRank(int index, FixSet fixes, EngineProcess engine) {
        this.index = index;
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.engine = Objects.requireNonNull(engine, "engine");
    }

    public int index() {
        return index;
    }

    public EngineProcess engine() {
        return engine;
    }

    /** ADD: held while paused ({@code PAUSED_NEW}), else into the scheduler at once. */
    synchronized void addRequest(EngineCoreRequest request) {
        Objects.requireNonNull(request, "request");
        if (paused) {
            held.add(request);
            return;
        }
        engine.inputSocket().send(new EngineCoreMessage.Add(request));
        engine.engineCore().processInputQueue();
    }

    /** {@code _send_start_wave} reached this rank: it is handled at the rank's next busy-loop iteration. */
    synchronized void deliverStartWave(int wave, Integer exclude) {
        startWaves.add(new int[] {wave, exclude == null ? -1 : exclude});
    }

    /**
     * {@code START_DP_WAVE}: with #39366 ignored once the pause reached consensus; otherwise a wave not older than the
     * rank's, not excluding it, sets {@code engines_running}.
     */
    synchronized void handleStartWaves() {
        while (!startWaves.isEmpty()) {
            int[] start = startWaves.poll();
            if (fixes.isOn(Fix.DP_TWO_PHASE_PAUSE) && ignoreStartDpWave) {
                continue;
            }
            if (start[1] != index && start[0] >= currentWave) {
                currentWave = start[0];
                enginesRunning = true;
            }
        }
    }

    /**
     * {@code pause_scheduler(mode="abort")}: aborts what the scheduler holds; before #39366 {@code _pause_complete} is
     * {@code not self.has_work()} and an idle rank is paused at once; with it the rank keeps stepping with
     * {@code pending_pause} until consensus.
     */
    synchronized void pause() {
        List<String> live = engine.scheduler().requestsSnapshot().stream().filter(r -> !r.isFinished()).map(Request::requestId).toList();
        engine.scheduler().finishRequests(live, RequestStatus.FINISHED_ABORTED);
        paused = true;
        if (fixes.isOn(Fix.DP_TWO_PHASE_PAUSE)) {
            pendingPause = true;
            enginesRunning = true;
        }
    }

    /** {@code resume_scheduler}: unpaused, START honoured again, the held requests handed to the scheduler. */
    synchronized void resume() {
        paused = false;
        pendingPause = false;
        ignoreStartDpWave = false;
        while (!held.isEmpty()) {
            engine.inputSocket().send(new EngineCoreMessage.Add(held.poll()));
        }
        engine.engineCore().processInputQueue();
    }

    /** Local unfinished work: a request the scheduler runs (a held one does not count). */
    synchronized boolean hasUnfinished() {
        return engine.scheduler().requestsSnapshot().stream().anyMatch(r -> !r.isFinished());
    }

    /** Whether the rank steps in this iteration: it runs a wave, or has local work. */
    synchronized boolean active() {
        return enginesRunning || hasUnfinished();
    }

    /** One step: the scheduler's batch when it has work, a dummy batch otherwise. */
    synchronized void step() {
        if (hasUnfinished()) {
            engine.engineCore().runBusyLoopOnce();
        }
    }

    synchronized boolean enginesRunning() {
        return enginesRunning;
    }

    synchronized void setEnginesRunning(boolean running) {
        enginesRunning = running;
    }

    synchronized boolean pendingPause() {
        return pendingPause;
    }

    /** Consensus reached ({@code sync_dp_state}): with #39366 the rank now ignores START and its pause is complete. */
    synchronized void pauseConsensus() {
        ignoreStartDpWave = true;
        pendingPause = false;
    }

    synchronized int currentWave() {
        return currentWave;
    }

    /** The wave ended: {@code current_wave += 1}. */
    synchronized void nextWave() {
        currentWave++;
        enginesRunning = false;
    }

    public synchronized boolean paused() {
        return paused;
    }

    /** Requests held while paused. */
    public synchronized int held() {
        return held.size();
    }

    @Override
    public synchronized String toString() {
        return "rank " + index + (paused ? " paused" : "") + (enginesRunning ? " running" : " idle") + " wave " + currentWave;
    }
}
