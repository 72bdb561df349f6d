package vllmrace.catalogue;

import vllmrace.races.Labels;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.Fix;
import vllmrace.races.Expectation;
import vllmrace.races.FixMatrix;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/** Renders results/README.md from the results tables: what a user reads first. */
final class ResultsReadme {
    private final Path results;
    private final Tsv verdicts;
    private final Tsv matrix;
    private final Tsv linearizability;

    ResultsReadme(Path results, Tsv verdicts, Tsv matrix, Tsv linearizability) {
        this.results = results;
        this.verdicts = verdicts;
        this.matrix = matrix;
        this.linearizability = linearizability;
    }

    void write() {
        StringBuilder md = new StringBuilder();
        md.append("# Results\n\n");
        md.append("Written by the race catalogue (`./catalogue`, see the top-level README) from its last run; do not edit by hand. ")
                .append("The tables below are also in `verdicts.tsv`, `linearizability.tsv` and `fix-matrix.tsv`.\n\n");
        md.append("How to read them: **every interleaving** runs every merge of the two actors' atomic steps on one thread and ")
                .append("judges each (the complete check at step granularity; its figures count the schedules that violate). ")
                .append("**Lincheck** 3.7 model-checks the same scenario: a bounded exploration of interleavings under sequential ")
                .append("consistency, switching threads only where upstream can (between coroutine steps); it stops at the first ")
                .append("violating invocation, or once its invocations have run every step interleaving the scenario has (\"stopped ")
                .append("once all N step interleavings were among them\"), else at its budget (\"bounded\"). **JCStress** runs the ")
                .append("two actors on real threads (quick settings), so its figures are samples and how many broke the invariant; ")
                .append("a clean one names its floor, the samples that would have shown the reported variant's rate in the same run ")
                .append("at least once with 99 % probability (at least 1,000), and a run below it is incomplete, never clean. ")
                .append("A run that ends in a scenario's modelling-error outcome is a harness error, never the race.\n\n");

        md.append("## Verdicts\n\n");
        md.append("Three fix sets per race: **reported** (every fix but the race's closers), **fixed** (every fix, ")
                .append("proposals included) and **vLLM main** (only the fixes vLLM has merged: does main still have the race?). ")
                .append("**every interleaving** is the step enumerator: every merge of the two actors' steps, run and judged. ")
                .append("The vLLM-main cells are computed by the enumerator and by Lincheck in the run, never typed, once per ")
                .append("deployment profile (vLLM main's merged fixes under one configuration; see Deployment profiles below).\n\n");
        md.append("| race | component | upstream |");
        for (Profile profile : Profile.values()) {
            md.append(' ').append(profile.label()).append(" |");
        }
        md.append(" every interleaving: reported / fixed | Lincheck reported | Lincheck fixed | JCStress reported | JCStress fixed | trace | replay |\n");
        md.append("|---|---|---|").append("---|".repeat(Profile.values().length)).append("---|---|---|---|---|---|---|\n");
        for (Race race : Race.values()) {
            md.append("| <a id=\"").append(anchor(race)).append("\"></a>`").append(race.name()).append("` | ")
                    .append(race.component().packageName()).append(" | ")
                    .append(race.upstream()).append(" | ");
            for (Profile profile : Profile.values()) {
                md.append(mainCell(race, profile)).append(" | ");
            }
            md
                    .append(cell(race, "every interleaving", Variant.REPORTED)).append(" / ")
                    .append(cell(race, "every interleaving", Variant.FIXED)).append(" | ")
                    .append(cell(race, "Lincheck", Variant.REPORTED)).append(" | ")
                    .append(cell(race, "Lincheck", Variant.FIXED)).append(" | ")
                    .append(cell(race, "JCStress", Variant.REPORTED)).append(" | ")
                    .append(cell(race, "JCStress", Variant.FIXED)).append(" | ")
                    .append(link("traces", race)).append(" | ").append(link("replays", race)).append(" |\n");
        }
        md.append("\nEach cell: observed verdict (expected in brackets when they differ), then the figures.\n\n");

        md.append("## Closers alone\n\n");
        md.append("A race with several closers, each alone (every fix but the race's other closers), by every step interleaving ")
                .append("and by Lincheck: a closer that works only next to another would otherwise pass unseen. A partial closer ")
                .append("is declared in the registry with the invariants it leaves broken; its cell is clean when nothing else ")
                .append("breaks, and the enumerator also checks that the leftover is still there.\n\n");
        md.append("| race | closer | every interleaving | Lincheck |\n|---|---|---|---|\n");
        for (Race race : Race.values()) {
            for (vllmrace.races.Subject subject : vllmrace.races.Cells.subjects(vllmrace.races.Engine.ENUMERATOR, race)) {
                if (subject.only() != null) {
                    md.append("| `").append(race.name()).append("` | ").append(subject.only().name())
                            .append(race.closers().leaves(subject.only()).isEmpty() ? "" : " (leaves " + race.closers().leaves(subject.only()) + ")")
                            .append(" | ").append(cell(race, "every interleaving", subject.variantLabel()))
                            .append(" | ").append(cell(race, "Lincheck", subject.variantLabel())).append(" |\n");
                }
            }
        }
        profiles(md);
        md.append("\n## Linearizability checks\n\n");
        md.append("A component's public operations against a plain sequential specification, invariants validated ")
                .append("(`@Validate`) where the component has them; the races' own shapes, plus random scenarios for the ")
                .append("frontend and the scheduler. Reported variant: must fail; fixed: must pass.\n\n");
        md.append("| check | variant | expected | observed | figures |\n|---|---|---|---|---|\n");
        for (List<String> row : linearizability.rows()) {
            md.append("| ").append(row.get(0)).append(" | ").append(row.get(1)).append(" | ").append(row.get(2))
                    .append(" | ").append(row.get(3)).append(" | ").append(row.get(4)).append(" |\n");
        }

        md.append("\n## Fix-switch matrix\n\n");
        md.append("Each race's scenario with no fix, each fix switch alone, the race's own fixes (`own`), and every fix: ")
                .append("which switches close which race, computed by running every interleaving of the two actors' steps ")
                .append("(each step atomic, as in the Lincheck checks) on a fresh model; counts are in `fix-matrix.tsv`. ")
                .append("A cell counts any violation of the scenario, so with only a few fixes on (`none`, one switch, `own`) it ")
                .append("may be another race the same steps pass through (e.g. RecvAndSendForAbortedLoad with only its own fix on: ")
                .append("when the ABORT lands after R finished, the scheduler fixes of #33377 and #25067 are off too, and R gets a ")
                .append("model output after it finished and a second `_free_request`, SC3 and SC1). The reported and fixed variants ")
                .append("are `all` minus the race's own fixes, and `all`.\n\n");
        if (Files.exists(results.resolve("fix-directions.md"))) {
            md.append("Seed 003's three fix directions, invariant by invariant (Lincheck and every step interleaving, against ")
                    .append("the expected matrix): [fix-directions.md](fix-directions.md).\n\n");
        }
        if (Files.exists(results.resolve("frontend-yields.md"))) {
            md.append("The frontend races and the external-id orphan question under each upstream yield condition: ")
                    .append("[frontend-yields.md](frontend-yields.md).\n\n");
        }
        List<String> columns = FixMatrix.columns();
        md.append("| race |");
        columns.forEach(c -> md.append(' ').append(c).append(" |"));
        md.append("\n|---|");
        columns.forEach(c -> md.append("---|"));
        md.append('\n');
        for (Race race : Race.values()) {
            md.append("| `").append(race.name()).append("` |");
            for (String column : columns) {
                List<String> row = matrix.get(race.name(), column);
                md.append(' ').append(row == null ? "not run" : matrixCell(row)).append(" |");
            }
            md.append('\n');
        }
        try {
            Files.writeString(results.resolve("README.md"), md.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Each profile: its configuration switches with their upstream evidence, and the fixes every profile has merged. */
    private static void profiles(StringBuilder md) {
        md.append("\n## Deployment profiles\n\n");
        md.append("A profile is what a deployment of vLLM main runs: the fixes vLLM has merged, under one configuration. A ")
                .append("configuration switch is not a fix: it changes no upstream code, it picks a code path a merged fix may ")
                .append("not reach (named below). `./catalogue --hunt --profile ID` hunts on one.\n\n");
        md.append("| profile | id | deployment | configuration switches |\n|---|---|---|---|\n");
        for (Profile profile : Profile.values()) {
            String switches = profile.configuration().asSet().stream()
                    .map(c -> "`" + c.setting() + "`: " + c.evidence() + "; "
                            + c.takesAway().map(f -> "takes away " + f.name() + " (" + f.upstream() + ")")
                                    .orElse("runs the " + profile.configuration().schedulerKind().upstreamClass()
                                            + " with one batch in flight (races that need overlapping batches cannot occur)")
                            + "; " + c.provenance())
                    .collect(java.util.stream.Collectors.joining("<br>"));
            md.append("| ").append(profile.label()).append(" | `").append(profile.id()).append("` | ").append(profile.deployment())
                    .append(" | ").append(switches.isEmpty() ? "none (upstream defaults)" : switches).append(" |\n");
        }
        md.append("\nMerged fixes (every profile): ");
        md.append(java.util.Arrays.stream(Fix.values()).filter(f -> f.provenance().merged())
                .map(f -> "`" + f.name() + "` (" + f.upstream() + ")").collect(java.util.stream.Collectors.joining(", ")));
        md.append(". Proposals, never on main: ");
        md.append(java.util.Arrays.stream(Fix.values()).filter(f -> !f.provenance().merged())
                .map(f -> "`" + f.name() + "` (" + f.provenance().kind().label() + ")").collect(java.util.stream.Collectors.joining(", ")));
        md.append(".\n");
    }

    /** The HTML anchor of a race's row. */
    static String anchor(Race race) {
        return race.name().toLowerCase();
    }

    /** The vLLM-main verdict on the default profile ({@link #mainCell(Race, Profile)}). */
    String mainCell(Race race) {
        return mainCell(race, Profile.MAIN);
    }

    /**
     * One cell for every profile: the main profile's label, then each other profile whose computed label differs, as
     * {@code closed (by #27987) · racy with ids not randomized}.
     */
    String compactMainCell(Race race) {
        String main = label(mainCell(race));
        StringBuilder cell = new StringBuilder(main);
        for (Profile profile : Profile.values()) {
            String other = label(mainCell(race, profile));
            if (profile != Profile.MAIN && !other.equals(main)) {
                String plain = other.replace("**", "");
                cell.append(" · ").append(plain).append(" with ").append(profile.label().replaceFirst("^vLLM main(, | \\+ )", ""));
            }
        }
        return cell.toString();
    }

    /** A main cell's label, without its figures. */
    private static String label(String mainCell) {
        return mainCell.contains(":") ? mainCell.substring(0, mainCell.indexOf(':')) : mainCell;
    }

    /** The verdict on one deployment profile of vLLM main: the enumerator's and Lincheck's, one label when they agree. */
    String mainCell(Race race, Profile profile) {
        if (race.expected(profile) == Expectation.NOT_APPLICABLE) {
            return "**" + Labels.expectedLabel(race, profile) + "**"; // no cell: the profile's scheduler class cannot reach it
        }
        List<String> enumerated = verdicts.get(race.name(), "every interleaving", profile.label());
        List<String> lincheck = verdicts.get(race.name(), "Lincheck", profile.label());
        if (enumerated == null || lincheck == null) {
            return "not run";
        }
        String label = enumerated.get(4).equals(lincheck.get(4)) ? "**" + enumerated.get(4) + "**"
                : "**engines disagree**: every interleaving " + enumerated.get(4) + ", Lincheck " + lincheck.get(4);
        boolean expected = enumerated.get(4).equals(enumerated.get(3)) && lincheck.get(4).equals(lincheck.get(3));
        return label + (expected ? "" : " (expected " + enumerated.get(3) + ")") + ": " + enumerated.get(7) + "; Lincheck: " + lincheck.get(7);
    }

    private String cell(Race race, String engine, Variant variant) {
        if (race.expected(variant) == Expectation.NOT_APPLICABLE) {
            return "— (positive control)";
        }
        return cell(race, engine, variant.label());
    }

    private String cell(Race race, String engine, String variantLabel) {
        List<String> row = verdicts.get(race.name(), engine, variantLabel);
        if (row == null) {
            return "not run";
        }
        String observed = row.get(4);
        String expected = row.get(3);
        String verdict = observed.equals(expected) ? "**" + observed + "**" : "**" + observed + "** (expected " + expected + ")";
        return verdict + ": " + row.get(7);
    }

    /** A matrix cell: the observation and how many interleavings violate, {@code bug found 5/7}. */
    private static String matrixCell(List<String> row) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(\\d+) of all (\\d+)").matcher(row.get(3));
        return row.get(2) + (m.find() && !row.get(2).equals("clean") ? " " + m.group(1) + "/" + m.group(2) : "");
    }

    private String link(String folder, Race race) {
        Path page = results.resolve(folder).resolve(race.name() + ".md");
        return Files.exists(page) ? "[" + folder.substring(0, folder.length() - 1) + "](" + folder + "/" + race.name() + ".md)" : "—";
    }
}
