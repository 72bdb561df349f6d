package vllmrace.lincheck;

import java.util.List;
import java.util.function.BiFunction;
import vllmrace.lincheck.connector.AggregatorLinearizability;
import vllmrace.lincheck.frontend.FrontendLinearizability;
import vllmrace.lincheck.scheduler.SchedulerLinearizability;
import vllmrace.lincheck.prove.Depth;
import vllmrace.lincheck.race.RaceLinearizability;
import vllmrace.lincheck.prove.Proof;
import vllmrace.lincheck.prove.ProofResult;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Component;
import vllmrace.races.Race;
import vllmrace.races.Shard;
import vllmrace.races.Variant;

/**
 * The linearizability checks: a component's public operations against a plain sequential specification (with the
 * component's invariants validated, where it has a validation). Each names the races it must catch: with any of those races' fixes
 * OFF (its reported variant) the check must fail, so it cannot pass vacuously; with every fix ON it must pass.
 */
public enum LinearizabilityCheck {
    FRONTEND(Component.FRONTEND, "AsyncLLM.add_request (n 1, n 2, a stop string, a streaming-input session), generate()'s take, the client's abort by external id, generate()'s "
            + "cancellation by internal id, EngineCore busy loop over KV blocks with an async-saving connector, saves finishing, "
            + "output handler; every await suspending (each race's reported cell: its own yield conditions); FE1, FE2, FE4 and "
            + "the scheduler's detectors validated; and a data-parallel set-up (client requests, pause, resume, the ranks' lockstep "
            + "iteration, the drain once the ranks are quiescent; LV3 and LV4)",
            List.of(Race.DuplicateIdAbortWindow, Race.StopStringLateAbort, Race.DelayFreedIdReuse, Race.ConcurrentAbortKillsReadd,
                    Race.ParentRequestLeakOnAbort, Race.CollectorMergesChunkBoundary, Race.DpPauseLatchStuck, Race.StaleWaveWakesPausedRank),
            (fixes, focus) -> focus == null ? FrontendLinearizability.check(fixes) : FrontendLinearizability.check(fixes, focus),
            FrontendLinearizability::proofs, List.of()),
    SCHEDULER(Component.SCHEDULER, "add (and a resubmission of an aborted id), abort, the busy loop's steps (input, schedule, "
            + "model output; idle while has_requests() is False), transfer completion, under the deployment's engine ids and "
            + "scheduling; SC1-SC6, FE2 and SC5's releasing event validated",
            List.of(Race.DoubleFreeOnAbortedAsyncSave, Race.AbortOfFinishedDelayFreed, Race.AbortLosesToFinalStep,
                    Race.AbortedLoadFreesBlocks, Race.AbortedLoadLeak, Race.IdleWithDelayFreedOnly, Race.DoubleAbortApplication,
                    Race.ReusedIdStaleOutputUnderflow),
            SchedulerLinearizability::check,
            SchedulerLinearizability::proofs,
            List.of(Race.AsyncFreeUnderInFlightStep, Race.PlaceholderUnderflowOnPreempt, Race.PreemptedInFinalStepEmptyBlocks,
                    Race.StoreReadsPreemptedBlocks)),
    CONNECTOR(Component.CONNECTOR, "a child reports a completion, a NIXL handle ends, the worker collects get_finished, the "
            + "scheduler side calls request_finished (MultiConnector + KvOutputAggregator; set-ups: seed 003's NIXL + LMCache loads of "
            + "one request, two async saves, an abort during a NIXL load next to an offloading child, a NIXL pull over two handles "
            + "one of which fails, a NIXL push over two WRITE handles, a NIXL notification whose handshake fails, two prefill-side leases and a heartbeat, a prefill side on two "
            + "replicated PCP ranks with NIXL and an offloader, an offloader's store job over a block reallocated to a NIXL "
            + "load); spec: "
            + "each transfer completes exactly once per direction, a pull or a push only after all its handles stopped, a "
            + "notification never, a lease at the first poll at or after its expiry, a store job copies its own request's KV",
            List.of(Race.LateLoadCompletionUnion, Race.RecvAndSendForAbortedLoad, Race.FailedRecvReportedTwice,
                    Race.SiblingHandleWritesAfterFailure, Race.PushSendNeverReported, Race.NotifOnlyFailedRecvForRemoved,
                    Race.LeaseReaperHeadOfLine, Race.ExtraSaveCountNeverDrained,
                    Race.NonChosenChildBlindToLoad),
            AggregatorLinearizability::check,
            AggregatorLinearizability::proofs,
            List.of(Race.ExtraAsyncSavesDedup, Race.PullIntoFreedBlocks, Race.LookupLocksLeakOnEarlyAbort, Race.LeaseExpiredReadAfterFree,
                    Race.BidirectionalTurn2ReadsExpired, Race.CancelBeforeSubmitStrandsPrefill, Race.SynthesizedSendForAbortedRetrieve));

    /**
     * The races no linearizability check lists, and why: each leaves every operation's result as the specification says
     * and only stops progress. A sequential specification says what each operation returns, not that something
     * eventually happens, so these are checked by the bounded liveness detectors in every engine instead (LV1: a
     * request neither finished nor scheduled while N more busy-loop iterations change nothing; LV2: a finished request
     * holding blocks that nothing will release).
     */
    public static final java.util.Map<Race, String> LIVENESS_ONLY = java.util.Map.of(
            Race.DelayFreedNeverReleased, "LV2: an aborted load whose push never lands is never freed; every operation returns what the specification says",
            Race.SkippedWaitingAdmissionDeadlock, "LV1: a request waits forever behind a blockless load; no operation returns a wrong result",
            Race.PushPostFailureDecodeWaits, "LV1: the decode side waits for a push that failed; no operation returns a wrong result",
            Race.PushPostFailureAbortedLeaks, "LV2: an aborted request waiting for a push that failed is never freed; every "
                    + "operation returns what the specification says");

    /** A check's bounded-exhaustive form: its proofs under some fixes and configuration (null: the check's own). */
    @FunctionalInterface
    interface Prover {
        List<Proof> proofs(FixSet fixes, Configuration configuration, Race focus, Depth depth);
    }

    private final Component component;
    private final String operations;
    private final List<Race> races;
    private final BiFunction<FixSet, Race, LincheckResult> check;
    private final Prover prover;
    private final List<Race> actionRaces;

    /**
     * @param check runs the check under some fixes; the race, when given, is the one whose reported switches these are,
     *              so the check can try that race's own shape first (it fails there sooner; the result is the same)
     */
    LinearizabilityCheck(Component component, String operations, List<Race> races, BiFunction<FixSet, Race, LincheckResult> check,
                         Prover prover, List<Race> actionRaces) {
        this.component = component;
        this.operations = operations;
        this.races = java.util.stream.Stream.concat(races.stream(), actionRaces.stream()).toList();
        this.check = check;
        this.prover = prover;
        this.actionRaces = actionRaces;
    }

    /**
     * The races checked on their own two actions ({@link RaceLinearizability}), not (yet) in the component's operation
     * set: its operations and specification do not hold their window.
     */
    public List<Race> actionRaces() {
        return actionRaces;
    }

    /** The races whose window the component's operation set holds. */
    public List<Race> operationRaces() {
        return races.stream().filter(r -> !actionRaces.contains(r)).toList();
    }

    public Component component() {
        return component;
    }

    public String operations() {
        return operations;
    }

    /** The races whose reported variant must make this check fail. */
    public List<Race> races() {
        return races;
    }

    /** The check with {@code race}'s reported switches: must fail. */
    public LincheckResult runReported(Race race) {
        if (!races.contains(race)) {
            throw new IllegalArgumentException(this + " does not cover " + race);
        }
        if (actionRaces.contains(race)) {
            return RaceLinearizability.check(race, race.fixes(Variant.REPORTED), null);
        }
        return check.apply(race.fixes(Variant.REPORTED), race);
    }

    /** The check with every fix ON: must pass. */
    public LincheckResult runFixed() {
        List<LincheckResult> runs = new java.util.ArrayList<>();
        runs.add(check.apply(FixSet.all(), null));
        for (Race race : actionRaces) {
            if (runs.get(runs.size() - 1).failed()) {
                return runs.get(runs.size() - 1);
            }
            runs.add(RaceLinearizability.check(race, FixSet.all(), null));
        }
        return runs.get(runs.size() - 1).failed() ? runs.get(runs.size() - 1)
                : LincheckResult.allPassed(this + " every fix (its operations; each action race's two actions)", runs);
    }

    /** The bounded-exhaustive check with {@code race}'s reported switches and configuration: must fail. */
    public ProofResult proveReported(Race race, Depth depth) {
        if (!races.contains(race)) {
            throw new IllegalArgumentException(this + " does not cover " + race);
        }
        if (actionRaces.contains(race)) {
            return Proof.runAll(this + " " + race + " reported", RaceLinearizability.proofs(race, race.fixes(Variant.REPORTED), null));
        }
        return Proof.runAll(this + " " + race + " reported", prover.proofs(race.fixes(Variant.REPORTED), race.configuration(), race, depth));
    }

    /** The bounded-exhaustive check with every fix ON, the check's own configuration: must pass. */
    public ProofResult proveFixed(Depth depth) {
        return prove("every fix", FixSet.all(), null, depth);
    }

    /** The bounded-exhaustive check under any fix set and configuration (null: the check's own). */
    public ProofResult prove(String name, FixSet fixes, Configuration configuration, Depth depth) {
        List<Proof> proofs = new java.util.ArrayList<>(prover.proofs(fixes, configuration, null, depth));
        for (Race race : actionRaces) {
            if (configuration == null || race.occursUnder(configuration.schedulerKind())) {
                proofs.addAll(RaceLinearizability.proofs(race, fixes, configuration));
            }
        }
        return Proof.runAll(this + " " + name, proofs);
    }

    /**
     * Why {@code fix}, a full closer of some race of this check, does not restore this check's specification, or null
     * when it does. The race registry judges a closer by the race's invariants; a linearizability check also compares
     * results, so a closer that acts elsewhere, or keeps the invariants by a slower path, can leave the check failing.
     */
    public String specificationDeviation(vllmrace.model.fix.Fix fix) {
        if (this == CONNECTOR && fix == vllmrace.model.fix.Fix.SCHEDULER_SKIP_LATE_REPORT) {
            return "it acts in the scheduler, outside this component: the scheduler skips the late report, the connector still sends it";
        }
        if (this == SCHEDULER && fix == vllmrace.model.fix.Fix.RECLAIM_ABORTED_RECV) {
            return "without #32255's review fix its reclaim frees an aborted load whose receive was already reported "
                    + vllmrace.model.sched.Scheduler.RECLAIM_GRACE_STEPS + " schedules later, not at once: no leak, but the busy "
                    + "loop keeps scheduling empty steps the specification does not (schedule [] where it says schedule -)";
        }
        return null;
    }

    /** One cell: a check with a race's reported switches (must fail), or with every fix ON ({@code race} null, must pass). */
    public record Cell(LinearizabilityCheck check, Race race) {
        @Override
        public String toString() {
            return check + (race == null ? " [every fix on]" : " [" + race + " reported]");
        }
    }

    /**
     * The cells of a shard: a race's reported cells go with the race, a check's every-fix cell by the check's ordinal.
     */
    public static List<Cell> cells(Shard shard) {
        List<Cell> cells = new java.util.ArrayList<>();
        for (LinearizabilityCheck check : values()) {
            for (Race race : check.races) {
                if (shard.includes(race) && race.expected(Variant.REPORTED) == vllmrace.races.Expectation.BUG_FOUND) {
                    cells.add(new Cell(check, race));
                }
            }
            if (shard.includesIndex(check.ordinal())) {
                cells.add(new Cell(check, null));
            }
        }
        return cells;
    }
}
