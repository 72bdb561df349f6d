package vllmrace.lincheck.race;

import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import vllmrace.lincheck.prove.Bound;
import vllmrace.lincheck.prove.Call;
import vllmrace.lincheck.prove.Proof;
import vllmrace.lincheck.prove.Subject;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Params;
import vllmrace.races.Race;

/**
 * The check of one race's two actions ({@link RaceOperations}): Lincheck, and the bounded-exhaustive check over every
 * point of the race's family (each point one program: its set-up, the two actions in parallel, the arbiter; every
 * interleaving of their steps).
 */
public final class RaceLinearizability {
    /** Lincheck invocations per point (each point's interleavings are few: the step enumerator counts them). */
    public static final int INVOCATIONS = 60;

    private RaceLinearizability() {
    }

    /** Lincheck over the race's default point under {@code fixes} and {@code configuration} (null: the race's own). */
    public static LincheckResult check(Race race, FixSet fixes, Configuration configuration) {
        RaceOperations.configure(race, fixes, configuration == null ? race.configuration() : configuration, race.grid().get(0));
        Class<?> c = RaceOperations.class;
        int budget = LincheckRun.scaled(INVOCATIONS);
        ModelCheckingOptions options = LincheckRun.modelChecking(budget)
                // the arbiter runs alone after both threads: nothing to interleave
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(RaceLinearizability::isScenarioClass).methods("arbiter", "judge").ignore())
                .iterations(0)
                .addCustomScenario(LincheckRun.scenario(List.of(), List.of(LincheckRun.call(c, "actor1")),
                        List.of(LincheckRun.call(c, "actor2")), List.of(LincheckRun.call(c, "arbiter"))))
                .sequentialSpecification(RaceOperations.Specification.class);
        return LincheckRun.check(race + " actions " + fixes, c, options, budget);
    }

    private static Boolean isScenarioClass(String className) {
        return className.startsWith("vllmrace.races.");
    }

    /** One proof per point of the race's family. */
    public static List<Proof> proofs(Race race, FixSet fixes, Configuration configuration) {
        Configuration conf = configuration == null ? race.configuration() : configuration;
        List<Proof> proofs = new ArrayList<>();
        for (Params point : race.grid()) {
            Subject subject = new Subject(race + " actions at " + point + " " + fixes, RaceOperations.class, RaceOperations.Specification.class,
                    () -> RaceOperations.configure(race, fixes, conf, point));
            // exactly the race's program: both actions, in parallel, then the arbiter (the smaller programs, one action
            // or none, are the set-up alone or a sequential run: they cannot race)
            proofs.add(new Proof(subject, List.of(Bound.exactly(race + (point.equals(Params.DEFAULT) ? "" : " " + point),
                    new vllmrace.lincheck.prove.Program(List.of(), List.of(Call.of("actor1")), List.of(Call.of("actor2")),
                            List.of(Call.of("arbiter")))))));
        }
        return proofs;
    }
}
