package vllmrace.lincheck;

import java.util.List;
import java.util.function.BiFunction;
import vllmrace.lincheck.connector.AggregatorLinearizability;
import vllmrace.lincheck.frontend.FrontendLinearizability;
import vllmrace.lincheck.scheduler.SchedulerLinearizability;
import vllmrace.lincheck.verdict.LincheckResult;
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
            (fixes, focus) -> focus == null ? FrontendLinearizability.check(fixes) : FrontendLinearizability.check(fixes, focus)),
    SCHEDULER(Component.SCHEDULER, "add, schedule, model output, abort, transfer completion; SC1-SC5 validated",
            List.of(Race.DoubleFreeOnAbortedAsyncSave, Race.AbortOfFinishedDelayFreed, Race.AbortLosesToFinalStep,
                    Race.AbortedLoadFreesBlocks, Race.AbortedLoadLeak),
            SchedulerLinearizability::check),
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
            AggregatorLinearizability::check);

    private final Component component;
    private final String operations;
    private final List<Race> races;
    private final BiFunction<FixSet, Race, LincheckResult> check;

    /**
     * @param check runs the check under some fixes; the race, when given, is the one whose reported switches these are,
     *              so the check can try that race's own shape first (it fails there sooner; the result is the same)
     */
    LinearizabilityCheck(Component component, String operations, List<Race> races, BiFunction<FixSet, Race, LincheckResult> check) {
        this.component = component;
        this.operations = operations;
        this.races = races;
        this.check = check;
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
        return check.apply(race.fixes(Variant.REPORTED), race);
    }

    /** The check with every fix ON: must pass. */
    public LincheckResult runFixed() {
        return check.apply(FixSet.all(), null);
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
                if (shard.includes(race)) {
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
