package vllmrace.catalogue;

import java.nio.file.Path;

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

    void write() {
        verdicts.write();
        matrix.write();
        linearizability.write();
    }

    ResultsReadme readme(Path results) {
        return new ResultsReadme(results, verdicts, matrix, linearizability);
    }
}
