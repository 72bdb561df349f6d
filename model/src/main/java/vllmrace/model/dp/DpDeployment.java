package vllmrace.model.dp;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import vllmrace.model.EngineProcess;
import vllmrace.model.Wired;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.engine.EngineCoreRequest;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * A data-parallel deployment of two ranks: the client ({@code DPAsyncMPClient} and its stats task), the coordinator
 * ({@link DpCoordinator}) and two {@link DpRank}s, each on its own EngineCore, all logging to one step log and one
 * violation log. The ranks step in lockstep ({@link #iterate}): every active rank steps, then the
 * {@code sync_dp_state} all-reduce decides whether work remains anywhere and whether the pause reached consensus; when
 * nothing remains rank 0 reports {@code wave_complete}. Requests are routed to rank 1 (the client's least-loaded engine),
 * each one token long.
 */
public final class DpDeployment implements Wired {
    /** The rank the client routes its requests to. */
    public static final int CHOSEN_ENGINE = 1;
    private final FixSet fixes;
    private final List<DpRank> ranks = new ArrayList<>();
    private final DpCoordinator coordinator;
    private boolean clientEnginesRunning;
    private int clientWave;
    private long arrivalClock;
    private boolean publishedRunning;
    private int publishedWave;

    public DpDeployment(FixSet fixes, Configuration configuration) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        EngineProcess first = EngineProcess.builder(fixes, configuration).build();
        ranks.add(new DpRank(0, fixes, first));
        ranks.add(new DpRank(1, fixes, EngineProcess.builder(fixes, configuration).sharingLogsWith(first).build()));
        coordinator = new DpCoordinator(fixes, ranks);
    }

    /** The chosen rank's EngineCore: where the client's requests run. */
    @Override
    public EngineProcess process() {
        return ranks.get(CHOSEN_ENGINE).engine();
    }

    public DpCoordinator coordinator() {
        return coordinator;
    }

    public DpRank rank(int index) {
        return ranks.get(index);
    }

    /**
     * {@code DPAsyncMPClient.add_request_async}: the ADD to the chosen engine, stamped with the client's wave; then, when
     * the client believes no wave runs, FIRST_REQ: its stats task sets the client's {@code engines_running = True} and
     * forwards {@code (engine, wave)} to the coordinator.
     *
     * @throws IllegalArgumentException for a null or empty id
     */
    public synchronized void addRequest(String requestId, int maxTokens) {
        ranks.get(CHOSEN_ENGINE).addRequest(new EngineCoreRequest(requestId, ++arrivalClock, 1, maxTokens));
        if (!clientEnginesRunning) {
            clientEnginesRunning = true;
            coordinator.frontendWake(CHOSEN_ENGINE, clientWave);
            publishIfChanged();
        }
    }

    /** {@code AsyncLLM.pause_generation(mode="abort")}: {@code pause_scheduler} on every rank. */
    public synchronized void pauseGeneration() {
        ranks.forEach(DpRank::pause);
    }

    /**
     * {@code AsyncLLM.resume_generation}: every rank resumes ({@code ignore_start_dp_wave = False}, its held requests go
     * to the scheduler) and the resume barrier runs every rank if any has work.
     *
     * <p>With #39366 a pause completes only at the ranks' consensus: {@code DPEngineCoreProc._pause_complete} sets
     * {@code pending_pause} and {@code engines_running} and returns False, so {@code pause_generation} returns once the
     * ranks have stepped to consensus, and that wave's end moves every rank to the next wave (a START of the old wave is
     * then stale). A resume while a pause is still in flight is refused, as {@code resume_scheduler} refuses it; nothing
     * changes.
     *
     * @throws IllegalStateException while a rank's pause has not reached consensus
     */
    public synchronized void resumeGeneration() {
        if (ranks.stream().anyMatch(DpRank::pendingPause)) {
            throw new IllegalStateException("resume_generation while a pause is in flight: pause_generation returns only at the "
                    + "ranks' consensus (#39366's pending_pause), and resume_scheduler refuses an unfinished pause");
        }
        ranks.forEach(DpRank::resume);
        boolean work = ranks.stream().anyMatch(DpRank::hasUnfinished);
        ranks.forEach(r -> r.setEnginesRunning(work));
    }

    /**
     * One lockstep iteration: each rank takes the START messages that reached it; every active rank steps; a rank
     * stepping while a peer does not is a collective without its members (LV4) and nothing more happens; then the
     * all-reduce: work anywhere, pause consensus ({@code pause_count == dp_size}); with none left, rank 0 reports
     * {@code wave_complete} and every rank moves to the next wave. With #51481 rank 0 reports a wave it starts.
     *
     * @return whether any rank stepped
     */
    public synchronized boolean iterate() {
        boolean wasRunning = ranks.get(0).enginesRunning();
        ranks.forEach(DpRank::handleStartWaves);
        List<DpRank> active = ranks.stream().filter(DpRank::active).toList();
        if (active.isEmpty()) {
            return false;
        }
        if (active.size() < ranks.size()) {
            if (!violations().has(ViolationKind.DP_STEP_WITHOUT_PEER)) {
                DpRank stuck = ranks.stream().filter(r -> !r.active()).findFirst().orElseThrow();
                violations().record(ViolationKind.DP_STEP_WITHOUT_PEER, "rank " + active.get(0).index(), active.get(0)
                        + " steps, and its per-step DP collective waits for " + stuck + ", which does not step: neither returns");
            }
            return false;
        }
        if (fixes.isOn(Fix.DP_WAKE_DOES_NOT_ASSUME_RUNNING) && !wasRunning && !ranks.get(0).pendingPause()
                && ranks.stream().anyMatch(DpRank::hasUnfinished)) {
            coordinator.engineStartedWave(ranks.get(0).currentWave(), 0); // rank 0 observed the wave start
            publishIfChanged();
        }
        ranks.forEach(DpRank::step);
        boolean unfinished = ranks.stream().anyMatch(DpRank::hasUnfinished);
        long pauseCount = ranks.stream().filter(DpRank::pendingPause).count();
        if (pauseCount == ranks.size()) {
            ranks.forEach(DpRank::pauseConsensus);
        }
        unfinished |= pauseCount % ranks.size() != 0;
        for (DpRank rank : ranks) {
            rank.setEnginesRunning(unfinished);
        }
        if (!unfinished) {
            coordinator.waveComplete(ranks.get(0).currentWave());
            publishIfChanged();
            ranks.forEach(DpRank::nextWave);
        }
        return true;
    }

    /** The coordinator publishes at once when its wave state changed ({@code if wave_state_changed: publish_front.send}). */
    private void publishIfChanged() {
        if (coordinator.enginesRunning() != publishedRunning || coordinator.currentWave() != publishedWave) {
            publishToClient();
        }
    }

    /** The coordinator's publish reaches the client: {@code self.current_wave = wave; self.engines_running = running}. */
    public synchronized void publishToClient() {
        publishedWave = coordinator.currentWave();
        publishedRunning = coordinator.enginesRunning();
        clientWave = publishedWave;
        clientEnginesRunning = publishedRunning;
    }

    /** {@code dp_engines_running()}: what {@code wait_for_requests_to_drain} polls. */
    public synchronized boolean clientEnginesRunning() {
        return clientEnginesRunning;
    }

    /**
     * LV3 at quiescence (no rank steps any more): the client, after the coordinator's publish, must not believe a wave
     * runs, else {@code wait_for_requests_to_drain} never returns.
     */
    public synchronized void checkQuiescence() {
        publishToClient();
        if (clientEnginesRunning && ranks.stream().noneMatch(DpRank::active)) {
            violations().record(ViolationKind.DRAIN_NEVER_RETURNS, "dp", "the coordinator publishes engines_running=True at wave "
                    + coordinator.currentWave() + " while no rank steps (" + ranks + "): wait_for_requests_to_drain never returns");
        }
    }

    @Override
    public synchronized String toString() {
        return ranks + ", coordinator wave " + coordinator.currentWave() + (coordinator.enginesRunning() ? " running" : " idle");
    }
}
