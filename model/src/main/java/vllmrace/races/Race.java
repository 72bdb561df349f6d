package vllmrace.races;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;
import vllmrace.races.frontend.DuplicateIdAbortWindowScenario;
import vllmrace.races.frontend.DelayFreedIdReuseScenario;
import vllmrace.races.frontend.StopStringLateAbortScenario;
import vllmrace.races.scheduler.AbortLosesToFinalStepScenario;
import vllmrace.races.scheduler.AbortOfFinishedDelayFreedScenario;
import vllmrace.races.scheduler.AbortedLoadFreesBlocksScenario;
import vllmrace.races.scheduler.AbortedLoadLeakScenario;
import vllmrace.races.scheduler.DoubleFreeOnAbortedAsyncSaveScenario;

/**
 * The race registry: one entry per race of {@code reference/race-catalogue.md}, read by the JCStress
 * verdict tests, the Lincheck tests, the replays and the catalogue command. The constant's name is the
 * race identifier, used verbatim by its fix switch's javadoc, its tests, its results row and its traces.
 *
 * <p>"Reported" = every fix ON except the ones that close this race; "fixed" = every fix ON. So a race's
 * two variants differ by exactly its own switches, on top of today's upstream behaviour.
 */
public enum Race {
    DuplicateIdAbortWindow(
            Component.FRONTEND,
            "#15326 (seed 001)",
            "abort drops frontend state, then sends ABORT; a re-add of the same id slips its ADD in between: "
                    + "two live requests under one id in EngineCore",
            EnumSet.of(Fix.ORDERED_ABORT, Fix.UNIQUE_INTERNAL_IDS),
            Expectation.BUG_FOUND,
            DuplicateIdAbortWindowScenario.Outcome.class,
            fixes -> new DuplicateIdAbortWindowScenario(fixes)),
    DoubleFreeOnAbortedAsyncSave(
            Component.SCHEDULER,
            "#33377 (seed 000)",
            "async scheduling + abort between schedule and update_from_output + a connector delaying the free: "
                    + "the finished request is processed again and freed twice",
            EnumSet.of(Fix.IS_FINISHED_GUARD),
            Expectation.BUG_FOUND,
            DoubleFreeOnAbortedAsyncSaveScenario.Outcome.class,
            fixes -> new DoubleFreeOnAbortedAsyncSaveScenario(fixes)),
    AbortOfFinishedDelayFreed(
            Component.SCHEDULER,
            "#25067",
            "abort of an already-finished request that holds delay-freed blocks re-runs _free_request; "
                    + "the later finished_sending hits a missing id",
            EnumSet.of(Fix.SKIP_ABORT_OF_FINISHED),
            Expectation.BUG_FOUND,
            AbortOfFinishedDelayFreedScenario.Outcome.class,
            fixes -> new AbortOfFinishedDelayFreedScenario(fixes)),
    AbortLosesToFinalStep(
            Component.SCHEDULER,
            "#29987 (fixes #26400)",
            "an abort arriving during a request's final step is overtaken by normal completion; the connector "
                    + "treats it as a success and pins its blocks",
            EnumSet.of(Fix.EAGER_ABORTS),
            Expectation.BUG_FOUND,
            AbortLosesToFinalStepScenario.Outcome.class,
            fixes -> new AbortLosesToFinalStepScenario(fixes)),
    AbortedLoadFreesBlocks(
            Component.SCHEDULER,
            "#32255",
            "abort of a request in WAITING_FOR_REMOTE_KVS frees its blocks while the async load still writes into "
                    + "them; another request gets them",
            EnumSet.of(Fix.DELAY_FREE_ABORTED_LOAD),
            Expectation.BUG_FOUND,
            AbortedLoadFreesBlocksScenario.Outcome.class,
            fixes -> new AbortedLoadFreesBlocksScenario(fixes)),
    AbortedLoadLeak(
            Component.SCHEDULER,
            "#32255 review",
            "abort after finished_recving already arrived: a naive delay flag waits for a completion that never "
                    + "comes, and the blocks leak",
            EnumSet.of(Fix.DELAY_FREE_UNLESS_RECVED),
            Expectation.BUG_FOUND,
            AbortedLoadLeakScenario.Outcome.class,
            fixes -> new AbortedLoadLeakScenario(fixes)),
    StopStringLateAbort(
            Component.FRONTEND,
            "#23697",
            "process_outputs drops X when it finds a stop string and the output handler sends ABORT(X) later; a re-added "
                    + "X is killed by that late ABORT and its caller never gets a final output",
            EnumSet.of(Fix.ORDERED_FINISH_ABORT, Fix.UNIQUE_INTERNAL_IDS),
            Expectation.BUG_FOUND,
            StopStringLateAbortScenario.Outcome.class,
            fixes -> new StopStringLateAbortScenario(fixes)),
    DelayFreedIdReuse(
            Component.FRONTEND,
            "#27987, #20139",
            "even with ordered abort, an aborted request whose blocks are delay-freed stays in Scheduler.requests; a "
                    + "re-ADD of its id collides. Ordered abort alone is not enough; unique internal ids are",
            EnumSet.of(Fix.UNIQUE_INTERNAL_IDS),
            Expectation.BUG_FOUND,
            DelayFreedIdReuseScenario.Outcome.class,
            fixes -> new DelayFreedIdReuseScenario(fixes)),
    ExtraAsyncSavesDedup(
            Component.CONNECTOR,
            "MultiConnector _extra_async_saves (reference §3b)",
            "positive control: with k async-saving children MultiConnector absorbs the first k-1 finished_sending reports "
                    + "and reports the request once, after the last save; its blocks are freed only then",
            EnumSet.noneOf(Fix.class),
            Expectation.NOT_APPLICABLE,
            vllmrace.races.connector.ExtraAsyncSavesDedupScenario.Outcome.class,
            fixes -> new vllmrace.races.connector.ExtraAsyncSavesDedupScenario(fixes)),
    LateLoadCompletionUnion(
            Component.CONNECTOR,
            "seed 003",
            "MultiConnector unions finished_recving without dedup; the faster of two async loads completes the request, "
                    + "the late NIXL completion is reported for a removed (or running) request: assert, engine dead",
            EnumSet.of(Fix.MULTI_CONNECTOR_LOAD_DEDUP, Fix.SCHEDULER_SKIP_LATE_REPORT),
            Expectation.BUG_FOUND,
            vllmrace.races.connector.LateLoadCompletionScenario.Outcome.class,
            fixes -> new vllmrace.races.connector.LateLoadCompletionScenario(fixes)),
    PullIntoFreedBlocks(
            Component.CONNECTOR,
            "seed 003 (aggravating factor)",
            "the NIXL decode side returns False from request_finished with a pull in flight; the finished request's blocks "
                    + "are freed and reallocated while the pull still writes into them",
            EnumSet.of(Fix.NIXL_PIN_PULL_BLOCKS, Fix.MULTI_CONNECTOR_LOAD_DEDUP),
            Expectation.BUG_FOUND,
            vllmrace.races.connector.PullIntoFreedBlocksScenario.Outcome.class,
            fixes -> new vllmrace.races.connector.PullIntoFreedBlocksScenario(fixes)),
    RecvAndSendForAbortedLoad(
            Component.CONNECTOR,
            "#46240",
            "a request aborted while its async load is in flight is delay-freed, and request_finished starts an async save "
                    + "in another child: recv and send both complete it, and the second hits assert req_id in self.requests",
            EnumSet.of(Fix.NO_SAVE_WHILE_LOADING),
            Expectation.BUG_FOUND,
            vllmrace.races.connector.RecvAndSendForAbortedLoadScenario.Outcome.class,
            fixes -> new vllmrace.races.connector.RecvAndSendForAbortedLoadScenario(fixes));

    private final Component component;
    private final String upstream;
    private final String summary;
    private final Set<Fix> closedBy;
    private final Expectation reportedExpectation;
    private final Class<? extends RaceOutcome> outcomes;
    private final Function<FixSet, RaceScenario> scenario;

    <O extends Enum<O> & RaceOutcome> Race(Component component, String upstream, String summary, Set<Fix> closedBy,
                                         Expectation reportedExpectation, Class<O> outcomes,
                                         Function<FixSet, RaceScenario> scenario) {
        this.component = component;
        this.upstream = upstream;
        this.summary = summary;
        this.closedBy = Set.copyOf(closedBy);
        this.reportedExpectation = reportedExpectation;
        this.outcomes = outcomes;
        this.scenario = scenario;
    }

    public Component component() {
        return component;
    }

    /** The upstream PR / issue / seed. */
    public String upstream() {
        return upstream;
    }

    public String summary() {
        return summary;
    }

    /** The fix switches that close this race. */
    public Set<Fix> closedBy() {
        return closedBy;
    }

    /** The fixes ON in a variant. */
    public FixSet fixes(Variant variant) {
        FixSet fixes = FixSet.all();
        if (variant == Variant.REPORTED) {
            for (Fix fix : closedBy) {
                fixes = fixes.without(fix);
            }
        }
        return fixes;
    }

    public Expectation expected(Variant variant) {
        return variant == Variant.REPORTED ? reportedExpectation : Expectation.CLEAN;
    }

    /** A fresh scenario on a fresh model for a variant. */
    public RaceScenario scenario(Variant variant) {
        return scenario(fixes(variant));
    }

    /** A fresh scenario under any combination of fixes (the fix matrices use this). */
    public RaceScenario scenario(FixSet fixes) {
        return scenario.apply(Objects.requireNonNull(fixes, "fixes"));
    }

    /** The outcome a harness reported under its name (a JCStress state key). */
    public RaceOutcome outcome(String name) {
        for (RaceOutcome outcome : outcomes.getEnumConstants()) {
            if (((Enum<?>) outcome).name().equals(name)) {
                return outcome;
            }
        }
        throw new IllegalArgumentException(name() + " has no outcome named '" + name + "'");
    }

    public RaceOutcome[] outcomes() {
        return outcomes.getEnumConstants();
    }

    /** The JCStress test class of one variant: {@code vllmrace.stress.<component>.<Race>$<Variant>}. */
    public String jcstressTestName(Variant variant) {
        return "vllmrace.stress." + component.packageName() + "." + name() + "." + variant.className();
    }

    /** Looks a race up by identifier, or by an upstream reference such as {@code #15326}. */
    public static Race lookup(String idOrReference) {
        for (Race race : values()) {
            if (race.name().equals(idOrReference) || race.upstream.contains(idOrReference)) {
                return race;
            }
        }
        throw new IllegalArgumentException("no race '" + idOrReference + "'; known: " + java.util.Arrays.toString(values()));
    }
}
