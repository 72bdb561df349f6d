package vllmrace.races.frontend;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import vllmrace.model.asyncio.YieldCondition;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.deploy.Profile;
import vllmrace.model.fix.FixSet;
import vllmrace.races.AllInterleavings;
import vllmrace.races.Component;
import vllmrace.races.Expectation;
import vllmrace.races.Params;
import vllmrace.races.Race;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RaceScenario;
import vllmrace.races.Variant;

/**
 * Every frontend race, and the external-id orphan question ({@link ExternalAbortOrphansReaddScenario}), re-derived under
 * each yield condition: each row a fix set (the reported one, every fix, each profile of vLLM main), each column the
 * conditions holding (none, or one {@link YieldCondition}), each cell every step interleaving at every point of the
 * family. {@link #mismatches} checks the registry's {@link Race#needsYield()} and vLLM-main expectations against it both
 * ways, and the question's answer; the catalogue writes {@link #toMarkdown} to results/frontend-yields.md.
 */
public final class FrontendYields {
    /** The question's subject name in the table. */
    public static final String QUESTION = "ExternalAbortOrphansReadd (question)";
    /** The points of the question's family. */
    public static final List<Params> QUESTION_POINTS = List.of(Params.DEFAULT, Params.of("priorFinished", 1), Params.of("n", 2));

    /** A column: no condition (null), or one condition alone. */
    public record Column(YieldCondition condition) {
        public Set<YieldCondition> holding() {
            return condition == null ? EnumSet.noneOf(YieldCondition.class) : EnumSet.of(condition);
        }

        public String label() {
            return condition == null ? "none" : condition.label();
        }
    }

    /** A row: one subject (a race, or the question when {@code race} is null) under one fix set and switch set. */
    public record Row(String subject, Race race, String fixesLabel, FixSet fixes, Configuration switches, Profile profile) {
    }

    /** One cell: the outcomes of every interleaving at every point. */
    public record Cell(Row row, Column column, Map<RaceOutcome, Integer> outcomes) {
        public long interleavings() {
            return outcomes.values().stream().mapToLong(Integer::longValue).sum();
        }

        public long violating() {
            return outcomes.entrySet().stream().filter(e -> e.getKey().violation()).mapToLong(Map.Entry::getValue).sum();
        }

        /** The question's own violation, told apart from the known races its set-up also shows. */
        public long orphans() {
            return outcomes.getOrDefault(ExternalAbortOrphansReaddScenario.Outcome.ORPHANED_READD, 0);
        }

        public boolean racy() {
            return row.race() == null ? orphans() > 0 : violating() > 0;
        }
    }

    private final List<Cell> cells;

    private FrontendYields(List<Cell> cells) {
        this.cells = List.copyOf(cells);
    }

    public static List<Column> columns() {
        List<Column> columns = new ArrayList<>();
        columns.add(new Column(null));
        for (YieldCondition condition : YieldCondition.values()) {
            columns.add(new Column(condition));
        }
        return columns;
    }

    /** The frontend races in registry order. */
    public static List<Race> races() {
        return java.util.Arrays.stream(Race.values()).filter(r -> r.component() == Component.FRONTEND).toList();
    }

    public static List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        for (Race race : races()) {
            rows.add(new Row(race.name(), race, "reported", race.fixes(Variant.REPORTED), Configuration.DEFAULT, null));
            rows.add(new Row(race.name(), race, "every fix", FixSet.all(), Configuration.DEFAULT, null));
            for (Profile profile : Profile.values()) {
                rows.add(new Row(race.name(), race, profile.label(), profile.fixes(), profile.configuration().withYields(Set.of()), profile));
            }
        }
        rows.add(new Row(QUESTION, null, "every fix", FixSet.all(), Configuration.DEFAULT, null));
        for (Profile profile : Profile.values()) {
            rows.add(new Row(QUESTION, null, profile.label(), profile.fixes(), profile.configuration().withYields(Set.of()), profile));
        }
        return rows;
    }

    /** Every cell; a modelling error in any interleaving fails the computation. */
    public static FrontendYields compute() {
        List<Cell> cells = new ArrayList<>();
        for (Row row : rows()) {
            for (Column column : columns()) {
                cells.add(cell(row, row.switches().withYields(column.holding()), column));
            }
        }
        return new FrontendYields(cells);
    }

    /** The row as deployed: a profile's own conditions (what vLLM can produce), else the race's {@link Race#configuration()}. */
    public static Cell deployed(Row row) {
        Configuration config = row.profile() != null ? row.profile().configuration()
                : row.race() != null ? row.race().configuration() : row.switches();
        return cell(row, config, null);
    }

    private static Cell cell(Row row, Configuration config, Column column) {
        List<Params> points = row.race() == null ? QUESTION_POINTS : row.race().grid();
        Function<Params, RaceScenario> scenario = row.race() == null
                ? p -> new ExternalAbortOrphansReaddScenario(row.fixes(), config, p)
                : p -> row.race().scenario(row.fixes(), config, p);
        Map<RaceOutcome, Integer> all = new LinkedHashMap<>();
        for (Params point : points) {
            Map<RaceOutcome, Integer> outcomes;
            try {
                outcomes = AllInterleavings.outcomes(() -> scenario.apply(point));
            } catch (IllegalStateException e) {
                if (e.getMessage() != null && e.getMessage().startsWith("set-up: ")) {
                    continue; // the set-up's state does not exist here (the sync Scheduler)
                }
                throw e;
            }
            outcomes.keySet().stream().filter(RaceOutcome::modellingError).findFirst().ifPresent(o -> {
                throw new IllegalStateException(row.subject() + " [" + row.fixesLabel() + "] under " + config + " at " + point
                        + ": a modelling error, " + o);
            });
            outcomes.forEach((k, v) -> all.merge(k, v, Integer::sum));
        }
        return new Cell(row, column, all);
    }

    public List<Cell> cells() {
        return cells;
    }

    /**
     * Where the table and the declarations disagree: a reported row must be racy exactly in the columns its race's
     * {@link Race#needsYield()} names (every column when it names none); every fix is clean everywhere; a profile row as
     * deployed shows what {@link Race#expected(Profile)} says; the question is racy only with an await inserted before
     * the send. A cell that ran nothing is a mismatch too.
     */
    public List<String> mismatches() {
        List<String> mismatches = new ArrayList<>();
        for (Cell cell : cells) {
            Row row = cell.row();
            String where = row.subject() + " [" + row.fixesLabel() + "] under " + cell.column().label();
            if (cell.interleavings() == 0 && !(row.profile() != null && row.race() != null
                    && row.race().expected(row.profile()) == Expectation.NOT_APPLICABLE)) {
                mismatches.add(where + ": nothing ran");
                continue;
            }
            Boolean expectedRacy = expectedRacy(row, cell.column());
            if (expectedRacy != null && expectedRacy != cell.racy()) {
                mismatches.add(where + ": expected " + (expectedRacy ? "racy" : "clean") + ", " + cell.violating() + " of "
                        + cell.interleavings() + " interleavings violate " + cell.outcomes());
            }
        }
        for (Row row : rows()) {
            if (row.profile() != null && row.race() != null) {
                Expectation expected = row.race().expected(row.profile());
                if (expected == Expectation.NOT_APPLICABLE) {
                    continue;
                }
                Cell deployed = deployed(row);
                if ((expected == Expectation.BUG_FOUND) != deployed.racy()) {
                    mismatches.add(row.subject() + " [" + row.fixesLabel() + "] as deployed: the registry expects "
                            + expected.label() + ", " + deployed.violating() + " of " + deployed.interleavings() + " interleavings violate");
                }
            }
        }
        return mismatches;
    }

    /** What a cell must show, or null where it is computed and shown only (profile rows: checked as deployed). */
    private static Boolean expectedRacy(Row row, Column column) {
        if (row.race() == null) {
            return column.condition() == YieldCondition.AWAIT_INSERTED_BEFORE_SEND;
        }
        if (row.fixesLabel().equals("every fix")) {
            return false;
        }
        if (row.fixesLabel().equals("reported")) {
            Set<YieldCondition> needs = row.race().needsYield();
            return needs.isEmpty() || !Collections.disjoint(needs, column.holding());
        }
        return null;
    }

    /** The page: the conditions, the changed verdicts, then the table. */
    public String toMarkdown() {
        StringBuilder md = new StringBuilder();
        md.append("# Frontend races under upstream's yields\n\n")
                .append("Written by the race catalogue (`./catalogue`, via `vllmrace.races.frontend.FrontendYields`); do not edit by hand.\n\n")
                .append("The frontend model runs each AsyncLLM coroutine as steps between awaits, and each boundary cites its upstream ")
                .append("await (`FrontendAwaits`): most complete at once (a done future; `_send_input` queues the message by a ")
                .append("synchronous `send_multipart` call) and suspend only under a condition. A boundary that does not suspend joins ")
                .append("its two steps into one. Each cell: every step interleaving at every point of the family, with the column's ")
                .append("condition holding (none, or one alone); **racy** k/N = k of N interleavings violate.\n\n")
                .append("| condition | vLLM can produce it | decided by |\n|---|---|---|\n");
        for (YieldCondition condition : YieldCondition.values()) {
            md.append("| ").append(condition.label()).append(" | ").append(condition.producedByVllm() ? "yes" : "no")
                    .append(" | ").append(condition.evidence().replace("|", "\\|")).append(" |\n");
        }
        List<String> mismatches = mismatches();
        md.append("\n**Against the registry** (`Race.needsYield`, `Race.expected(Profile)`; the question: racy only with an await ")
                .append("inserted before the send): ").append(mismatches.isEmpty() ? "every checked cell agrees." : "MISMATCH in "
                        + mismatches.size() + " cell(s):").append('\n');
        mismatches.forEach(m -> md.append("- ").append(m).append('\n'));
        md.append("\nA profile row's own verdict runs with every condition vLLM can produce holding (\"as deployed\").\n\n");
        md.append("| subject | fixes |");
        columns().forEach(c -> md.append(' ').append(c.label()).append(" |"));
        md.append(" as deployed |\n|---|---|");
        columns().forEach(c -> md.append("---|"));
        md.append("---|\n");
        Map<Row, List<Cell>> byRow = new LinkedHashMap<>();
        cells.forEach(c -> byRow.computeIfAbsent(c.row(), r -> new ArrayList<>()).add(c));
        byRow.forEach((row, rowCells) -> {
            md.append("| ").append(row.subject()).append(" | ").append(row.fixesLabel()).append(" |");
            rowCells.forEach(c -> md.append(' ').append(render(c)).append(" |"));
            md.append(' ').append(render(deployed(row))).append(" |\n");
        });
        return md.toString();
    }

    private static String render(Cell cell) {
        if (cell.interleavings() == 0) {
            return "not reachable";
        }
        if (cell.violating() == 0) {
            return "clean " + cell.interleavings();
        }
        if (cell.row().race() == null) {
            List<String> parts = new ArrayList<>();
            cell.outcomes().forEach((o, n) -> {
                if (o.violation()) {
                    parts.add((o == ExternalAbortOrphansReaddScenario.Outcome.ORPHANED_READD ? "**" + ((Enum<?>) o).name() + "**"
                            : ((Enum<?>) o).name()) + " " + n);
                }
            });
            return String.join(", ", parts) + " / " + cell.interleavings();
        }
        return "**racy** " + cell.violating() + "/" + cell.interleavings();
    }

    /** Writes {@link #toMarkdown} to {@code resultsDir/frontend-yields.md}; returns the path. */
    public java.nio.file.Path write(java.nio.file.Path resultsDir) {
        java.nio.file.Path out = Objects.requireNonNull(resultsDir, "resultsDir").resolve("frontend-yields.md");
        try {
            java.nio.file.Files.writeString(out, toMarkdown());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out;
    }
}
