package vllmrace.catalogue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import vllmrace.lincheck.LinearizabilityCheck;
import vllmrace.races.Engine;
import vllmrace.races.FixMatrix;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/** The tables under results/ that a run merges into: verdicts, the fix-switch matrix, the linearizability checks. */
record ResultsTables(Tsv verdicts, Tsv matrix, Tsv linearizability) {

    static ResultsTables load(Path results) {
        return new ResultsTables(
                new Tsv(results.resolve("verdicts.tsv"), 3,
                        "race", "engine", "variant", "expected", "observed", "runs", "violating", "figures", "wall_ms"),
                new Tsv(results.resolve("fix-matrix.tsv"), 2, "race", "fixes_on", "observed", "figures"),
                new Tsv(results.resolve("linearizability.tsv"), 2,
                        "check", "variant", "expected", "observed", "figures", "wall_ms"));
    }

    /** Writes the tables in registry order (race, then engine, variant or column), however the runs merged them. */
    void write() {
        verdicts.sort(Comparator.comparing((List<String> r) -> raceIndex(r.get(0)))
                .thenComparing(r -> index(Arrays.stream(Engine.values()).map(Engine::label).toList(), r.get(1)))
                .thenComparing(r -> index(Arrays.stream(Variant.values()).map(Variant::label).toList(), r.get(2).split(" ")[0]))
                .thenComparing(r -> r.get(2)));
        matrix.sort(Comparator.comparing((List<String> r) -> raceIndex(r.get(0))).thenComparing(r -> index(FixMatrix.columns(), r.get(1))));
        linearizability.sort(Comparator.comparing((List<String> r) -> index(
                Arrays.stream(LinearizabilityCheck.values()).map(Enum::name).toList(), r.get(0)))
                .thenComparing(r -> r.get(1).equals("all fixes") ? Integer.MAX_VALUE : raceIndex(r.get(1).split(" ")[0])));
        verdicts.write();
        matrix.write();
        linearizability.write();
    }

    private static int raceIndex(String name) {
        return index(Arrays.stream(Race.values()).map(Enum::name).toList(), name);
    }

    /** The position in {@code order}, unknown names last. */
    private static int index(List<String> order, String name) {
        int i = order.indexOf(name);
        return i < 0 ? Integer.MAX_VALUE - 1 : i;
    }

    ResultsReadme readme(Path results) {
        return new ResultsReadme(results, verdicts, matrix, linearizability);
    }
}
