package vllmrace.lincheck.verdict;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import vllmrace.evidence.ResultsDir;
import vllmrace.races.Race;
import vllmrace.races.RaceScenario;
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
        return ResultsDir.get().resolve("traces").resolve(race.name() + ".md");
    }

    public static Path replayPath(Race race) {
        return ResultsDir.get().resolve("replays").resolve(race.name() + ".md");
    }

    /** Writes the counterexample of {@code race}'s reported variant; returns the page written. */
    public static Path save(Race race, Variant variant, LincheckResult result) {
        if (!result.failed()) {
            throw new IllegalArgumentException("no counterexample to save: " + result.check() + " passed");
        }
        StringBuilder page = new StringBuilder();
        page.append("# ").append(race.name()).append(": Lincheck counterexample (").append(variant.className().toLowerCase()).append(" variant)\n\n");
        page.append("Written by the suite (`LincheckRun` + `TraceStore`); do not edit by hand.\n\n");
        page.append("- Race: ").append(race.summary()).append('\n');
        page.append("- Upstream: ").append(race.upstream()).append('\n');
        page.append("- Fixes ON: ").append(race.fixes(variant)).append('\n');
        page.append("- Found by Lincheck 3.7 model checking after ").append(result.invocations())
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
        Path path = tracePath(race);
        write(path, page.toString());
        write(Path.of("target", "traces", race.name() + ".lincheck-full.txt"), result.detailedReport());
        saveReplay(race, variant, result);
        return path;
    }

    /** The replay page: one numbered line per step, tagged with the actor that ran it ({@link #STEP_LINE}). */
    private static void saveReplay(Race race, Variant variant, LincheckResult result) {
        RaceScenario scenario = race.scenario(race.fixes(variant));
        String task1 = scenario.actor1().task() + ": ";
        String task2 = scenario.actor2().task() + ": ";
        StringBuilder page = new StringBuilder();
        page.append("# ").append(race.name()).append(": replay\n\n");
        page.append("Written by the suite from the Lincheck counterexample in [../traces/").append(race.name())
                .append(".md](../traces/").append(race.name()).append(".md); do not edit by hand.\n\n");
        page.append("Actor 1 runs `").append(scenario.actor1().task()).append("`, actor 2 runs `")
                .append(scenario.actor2().task()).append("`; the arbiter then lets EngineCore and the output handler ")
                .append("run to quiescence. Each step is named after the upstream function it performs, so the list ")
                .append("ports to a vLLM unit test: perform the steps in this order, awaiting where a step ends.\n\n");
        page.append("## Steps\n\n");
        List<String> steps = result.steps();
        for (int i = 0; i < steps.size(); i++) {
            String step = steps.get(i);
            String who = step.startsWith(task1) ? "actor 1" : step.startsWith(task2) ? "actor 2" : "arbiter";
            page.append(i + 1).append(". [").append(who).append("] ").append(step).append('\n');
        }
        page.append("\n## Expected\n\n");
        page.append("- Reported variant (fixes ON: ").append(race.fixes(Variant.REPORTED)).append("): the race; the detectors record\n");
        for (String violation : result.violations()) {
            page.append("  - ").append(violation).append('\n');
        }
        page.append("- Fixed variant (fixes ON: ").append(race.fixes(Variant.FIXED))
                .append("): the same actor order, no violation.\n\n");
        page.append("`ReplayTest` (module results) performs these steps on one thread and asserts both.\n");
        write(replayPath(race), page.toString());
    }

    /** A replay line: number, actor, then the step as the model logs it. */
    public static final java.util.regex.Pattern STEP_LINE =
            java.util.regex.Pattern.compile("^\\d+\\. \\[(actor 1|actor 2|arbiter)\\] (.*)$");

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
