package vllmrace.evidence;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the evidence goes: the top-level {@code results/} folder of this checkout. */
public final class ResultsDir {
    private ResultsDir() {
    }

    /**
     * The folder named by the system property {@code vllmrace.results.dir} (Maven sets it), else the first
     * {@code results/} beside a {@code pom.xml} found walking up from the working directory.
     */
    public static Path get() {
        String configured = System.getProperty("vllmrace.results.dir");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured).toAbsolutePath().normalize();
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("results")) && Files.exists(dir.resolve("pom.xml"))
                    && Files.exists(dir.resolve("model"))) {
                return dir.resolve("results");
            }
        }
        throw new IllegalStateException("cannot find results/: set -Dvllmrace.results.dir");
    }
}
