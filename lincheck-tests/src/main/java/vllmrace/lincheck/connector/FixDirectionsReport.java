package vllmrace.lincheck.connector;

import java.nio.file.Path;
import vllmrace.evidence.ResultsDir;

/**
 * Test-independent entry point: computes seed 003's fix-direction matrix and writes {@code results/fix-directions.md}.
 * Run with the lincheck-tests test classpath, e.g. {@code java -cp ... vllmrace.lincheck.connector.FixDirectionsReport}.
 */
public final class FixDirectionsReport {
    private FixDirectionsReport() {
    }

    /** Computes the matrix and writes it under {@code resultsDir}; returns the file written. */
    public static Path writeTo(Path resultsDir) {
        return FixDirectionMatrix.write(resultsDir, FixDirectionMatrix.compute());
    }

    /** Writes the exhaustive (model-only, seconds) matrix under {@code resultsDir}; returns the file written. */
    public static Path writeExhaustiveTo(Path resultsDir) {
        return FixDirectionMatrix.write(resultsDir, FixDirectionMatrix.computeExhaustive());
    }

    /** {@code [resultsDir] [--lincheck]}: the exhaustive matrix by default, the Lincheck one with --lincheck. */
    public static void main(String[] args) {
        boolean lincheck = java.util.Arrays.asList(args).contains("--lincheck");
        Path dir = args.length > 0 && !args[0].startsWith("--") ? Path.of(args[0]) : ResultsDir.get();
        Path out = lincheck ? writeTo(dir) : writeExhaustiveTo(dir);
        System.out.println("wrote " + out);
    }
}
