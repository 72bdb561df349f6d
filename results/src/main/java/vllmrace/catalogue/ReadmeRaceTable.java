package vllmrace.catalogue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import vllmrace.races.Expectation;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/**
 * The race table of the top-level README, rendered from the registry between two markers, so the README
 * cannot list a race the model lacks or miss one it has. The catalogue rewrites it; a test compares.
 */
final class ReadmeRaceTable {
    static final String BEGIN = "<!-- race table: written by ./catalogue from the registry -->";
    static final String END = "<!-- end of race table -->";

    private ReadmeRaceTable() {
    }

    /**
     * The table: the registry's races, expectations and closers, and the vLLM-main verdicts the last run computed (the
     * default profile's, then each profile that differs).
     */
    static String render(ResultsReadme results) {
        StringBuilder md = new StringBuilder(BEGIN).append('\n');
        md.append("| race | component | upstream | vLLM main | reported | fixed | results |\n|---|---|---|---|---|---|---|\n");
        for (Race race : Race.values()) {
            String fixes = race.closedBy().stream().map(Enum::name).sorted().collect(Collectors.joining(", "));
            md.append("| `").append(race.name()).append("` | ").append(race.component().packageName()).append(" | ")
                    .append(race.upstream()).append(" | ").append(results.compactMainCell(race))
                    .append(" | ").append(race.expected(Variant.REPORTED).label()).append(reportedUnder(race)).append(" | ")
                    .append(Expectation.CLEAN.label()).append(fixes.isEmpty() ? " (upstream as is)" : " (" + fixes + ")").append(" | ")
                    .append("[row](results/README.md#").append(ResultsReadme.anchor(race)).append(")");
            if (race.expected(Variant.REPORTED) == Expectation.BUG_FOUND) {
                md.append(", [trace](results/traces/").append(race.name()).append(".md), [replay](results/replays/")
                        .append(race.name()).append(".md)");
            }
            md.append(" |\n");
        }
        return md.append(END).toString();
    }

    /** Where a race's reported variant runs with yield conditions its window needs ({@link Race#needsYield()}): which. */
    static String reportedUnder(Race race) {
        return race.needsYield().isEmpty() ? "" : " (with " + race.needsYield().stream()
                .map(vllmrace.model.asyncio.YieldCondition::label).collect(Collectors.joining(" or ")) + ")";
    }

    /** The README with its race table replaced by the rendered one. */
    static String rewrite(String readme, ResultsReadme results) {
        int begin = readme.indexOf(BEGIN);
        int end = readme.indexOf(END);
        if (begin < 0 || end < begin) {
            throw new IllegalStateException("README.md has no race table markers: " + BEGIN + " ... " + END);
        }
        return readme.substring(0, begin) + render(results) + readme.substring(end + END.length());
    }

    static void rewrite(Path readme, ResultsReadme results) throws IOException {
        Files.writeString(readme, rewrite(Files.readString(readme), results));
    }
}
