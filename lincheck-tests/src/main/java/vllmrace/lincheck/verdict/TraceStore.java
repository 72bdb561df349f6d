package vllmrace.lincheck.verdict;

import vllmrace.races.Stories;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import vllmrace.evidence.ResultsDir;
import vllmrace.races.Race;
import vllmrace.races.ReplayPage;
import vllmrace.races.Variant;

/**
 * Saves a Lincheck counterexample as a readable page under {@code results/traces/}: the model steps in the
 * order they ran, what the detectors saw, then Lincheck's own interleaving report. The full report with
 * Lincheck's detailed trace goes beside the build output ({@code target/}), since it runs to hundreds of KB.
 * It also writes the replay, {@code results/replays/<race>.md}: the same steps with the actor that ran each,
 * which {@code ReplayTest} performs on one thread and a vLLM developer can port to a Python unit test.
 */
public final class TraceStore {
    private TraceStore() {
    }

    public static Path tracePath(Race race) {
        return tracePath(ResultsDir.get(), race);
    }

    public static Path replayPath(Race race) {
        return replayPath(ResultsDir.get(), race);
    }

    static Path tracePath(Path evidence, Race race) {
        return evidence.resolve("traces").resolve(race.name() + ".md");
    }

    static Path replayPath(Path evidence, Race race) {
        return evidence.resolve("replays").resolve(race.name() + ".md");
    }

    /**
     * Writes the counterexample of {@code race}'s {@code variant} under {@code evidence} (results/ for the catalogue,
     * a folder under target/ for the tests, which never rewrite the committed evidence); returns the trace page.
     */
    public static Path save(Path evidence, Race race, Variant variant, LincheckResult result) {
        if (result.steps().isEmpty()) {
            throw new IllegalArgumentException("no counterexample to save: " + result.check() + " recorded no violating run");
        }
        StringBuilder page = new StringBuilder();
        page.append("# ").append(race.name()).append(": Lincheck counterexample (").append(variant.label()).append(" variant)\n\n");
        page.append("Written by the suite (`LincheckRun` + `TraceStore`); do not edit by hand.\n\n");
        page.append("- Race: ").append(Stories.summary(race)).append('\n');
        page.append("- Upstream: ").append(race.upstream()).append('\n');
        page.append("- Fixes ON: ").append(race.fixes(variant)).append('\n');
        page.append("- Found by Lincheck 3.7 model checking in ").append(result.invocations())
                .append(" invocation(s) (bounded exploration under sequential consistency).\n\n");
        page.append("## The interleaving, as model steps\n\n");
        page.append("Each step is the code between two upstream `await`s (or one EngineCore call), named after the upstream function.\n\n");
        appendNumbered(page, result.steps());
        page.append("\n## What the model's detectors recorded\n\n");
        if (result.violations().isEmpty()) {
            page.append("(nothing)\n");
        }
        for (String violation : result.violations()) {
            page.append("- ").append(violation).append('\n');
        }
        page.append("\n## Lincheck's report\n\n```\n").append(result.report()).append("\n```\n");
        Path path = tracePath(evidence, race);
        write(path, page.toString());
        write(Path.of("target", "traces", race.name() + ".lincheck-full.txt"), result.detailedReport());
        write(replayPath(evidence, race), ReplayPage.render(race, variant, result.steps(), result.violations()));
        return path;
    }

    private static void appendNumbered(StringBuilder page, List<String> steps) {
        for (int i = 0; i < steps.size(); i++) {
            page.append(i + 1).append(". ").append(steps.get(i)).append('\n');
        }
    }

    private static void write(Path path, String text) {
        try {
            Files.createDirectories(path.getParent());
            Files.writeString(path, text);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + path, e);
        }
    }
}
