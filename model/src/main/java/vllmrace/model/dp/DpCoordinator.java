package vllmrace.model.dp;

import java.util.List;
import java.util.Objects;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * Mirrors {@code vllm/v1/engine/coordinator.py}@de4c1fcb, {@code DPCoordinatorProc}: the data-parallel coordinator's
 * wave state ({@code current_wave}, {@code engines_running}), a front-end wake (the client's stats task forwarding
 * FIRST_REQ as {@code (engine, wave)}), an engine's {@code wave_complete} and {@code start_wave} reports, and the
 * {@code START_DP_WAVE} broadcast ({@code _send_start_wave}: to every rank, which applies the exclusion itself).
 * Publishing its state to the client is {@link #enginesRunning()} and {@link #currentWave()}.
 */
public final class DpCoordinator {
    private final FixSet fixes;
    private final List<DpRank> ranks;
    private int currentWave;
    private boolean enginesRunning;

    DpCoordinator(FixSet fixes, List<DpRank> ranks) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        this.ranks = List.copyOf(ranks);
    }

    /**
     * A front-end wake: {@code if not self.engines_running:} a stale wave excludes nobody; before #51481 the coordinator
     * then sets {@code engines_running = True} (a prediction); with {@link Fix#DP_WAKE_DOES_NOT_ASSUME_RUNNING} it only
     * broadcasts START.
     *
     * @throws IllegalArgumentException for an engine index out of range or a negative wave
     */
    public synchronized void frontendWake(int engineToExclude, int wave) {
        checkEngine(engineToExclude);
        if (wave < 0) {
            throw new IllegalArgumentException("a wave is >= 0, got " + wave);
        }
        if (enginesRunning) {
            return;
        }
        Integer exclude = wave < currentWave ? null : engineToExclude;
        if (!fixes.isOn(Fix.DP_WAKE_DOES_NOT_ASSUME_RUNNING)) {
            enginesRunning = true;
        }
        sendStartWave(currentWave, exclude);
    }

    /** Rank 0's {@code wave_complete}: {@code if self.current_wave <= wave: current_wave = wave + 1; engines_running = False}. */
    synchronized void waveComplete(int wave) {
        if (currentWave <= wave) {
            currentWave = wave + 1;
            enginesRunning = false;
        }
    }

    /** An engine's {@code start_wave} report: a wave it started; the other ranks are woken for it. */
    synchronized void engineStartedWave(int wave, int engine) {
        if (wave > currentWave || (wave == currentWave && !enginesRunning)) {
            currentWave = wave;
            enginesRunning = true;
            sendStartWave(wave, engine);
        }
    }

    private void sendStartWave(int wave, Integer exclude) {
        for (DpRank rank : ranks) {
            rank.deliverStartWave(wave, exclude);
        }
    }

    private void checkEngine(int engine) {
        if (engine < 0 || engine >= ranks.size()) {
            throw new IllegalArgumentException("no DP rank " + engine + " (ranks 0.." + (ranks.size() - 1) + ")");
        }
    }

    public synchronized boolean enginesRunning() {
        return enginesRunning;
    }

    public synchronized int currentWave() {
        return currentWave;
    }
}
