package vllmrace.catalogue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import vllmrace.lincheck.LinearizabilityCheck;
import vllmrace.lincheck.LinearizabilityProofs;
import vllmrace.lincheck.LinearizabilityProofs.Row;
import vllmrace.lincheck.prove.Depth;
import vllmrace.lincheck.prove.ProofResult;
import vllmrace.races.Race;

/**
 * {@code ./catalogue --prove [--bound B]}: every linearizability check bounded-exhaustively under every fix set that
 * matters ({@link LinearizabilityProofs}), each verdict against what the race registry says, and
 * {@code results/linearizability.md}. Exit 0 when every row is as expected, 1 otherwise.
 */
final class ProveCommand {
    /** The bound of every row but the deep one, per check, unless {@code --bound} names one. */
    static Depth tableBound(LinearizabilityCheck check) {
        return switch (check) {
            case FRONTEND -> Depth.mixed(0);
            case SCHEDULER, CONNECTOR -> Depth.whole(2);
        };
    }

    /** The deep every-fix row's bound, per check, unless {@code --bound} names one: at least 10^5 histories, in minutes. */
    static Depth deepBound(LinearizabilityCheck check) {
        return switch (check) {
            case FRONTEND -> Depth.mixed(2);
            case SCHEDULER -> Depth.whole(4);
            case CONNECTOR -> Depth.whole(3);
        };
    }

    private final Path results;
    private final Depth bound;
    private final Terminal out = new Terminal();

    /** @param bound {@code --bound}, or null for each check's own */
    ProveCommand(Path results, Depth bound) {
        this.results = results;
        this.bound = bound;
    }

    int run() {
        List<Row> rows = new ArrayList<>();
        long start = System.nanoTime();
        for (LinearizabilityCheck check : LinearizabilityCheck.values()) {
            Depth table = bound != null ? bound : tableBound(check);
            Depth deep = bound != null ? bound : deepBound(check);
            out.line(check + ": bound " + table + (deep.equals(table) ? "" : " (and every fix at " + deep + ")"));
            for (Row row : LinearizabilityProofs.rows(check, table, deep)) {
                rows.add(row);
                out.verdict(row.agrees(), String.format(Locale.ROOT, "  %-55s %s", row.fixSet(), row.result().figures()));
            }
        }
        long seconds = (System.nanoTime() - start) / 1_000_000_000L;
        long wrong = rows.stream().filter(r -> !r.agrees()).count();
        write(rows, seconds);
        out.line(rows.size() + " rows in " + seconds + " s; " + (wrong == 0 ? "every verdict as expected" : wrong + " not as expected")
                + " -> results/linearizability.md");
        return wrong == 0 ? 0 : 1;
    }

    private void write(List<Row> rows, long seconds) {
        StringBuilder b = new StringBuilder();
        b.append("# Linearizability proofs, bounded-exhaustive\n\n");
        b.append("Written by `./catalogue --prove").append(bound == null ? "" : " --bound " + bound).append("` (").append(rows.size())
                .append(" rows, ").append(seconds).append(" s on ").append(Runtime.getRuntime().availableProcessors())
                .append(" CPUs, one thread). Do not edit: run the command.\n\n");
        b.append("""
                Each check runs a component's operations (the Lincheck operations class of `LinearizabilityTest`) against its
                sequential specification. Within a bound it runs **every program** (after a race shape's set-up, two threads
                of calls, then the shape's final part) and **every interleaving** of the two threads at step granularity (a
                coroutine step between two upstream awaits; an operation with no step is one), each from a fresh model.
                Each interleaving gives one history: an operation's invocation at its first step, its response at its last
                (the tightest history; a looser one only allows more orders). A history passes when the invariants hold
                after each part and some order of its operations that respects real time gives the same results in the
                specification (Wing and Gong's search). Programs run fewest parallel calls first, so a counterexample is
                in a smallest failing program. Like Lincheck's model checking this is a check under sequential consistency
                at the model's step granularity, bounded by the programs of the bound: "linearizable" means within that
                bound, every program and interleaving counted.

                Bounds (`--bound`): `shape` (each thread any sequence of its own shape thread's calls, up to its length;
                what `mvn verify` runs, beside Lincheck, and the build fails where the two engines disagree), `mixed:N`
                (either thread any sequence of both shape threads' calls, up to the longer one plus N), `whole:N` (either
                thread any sequence of the check's whole alphabet, up to N calls; the scheduler keeps its busy loop on one
                thread, one step past the shape).

                A row is **as expected** when: every fix: linearizable; a profile of vLLM main: not linearizable exactly
                when the race table has one of the check's races racy there, on an invariant of such a race; a race's
                reported switches: not linearizable, on its own invariant; one closer alone on top of them: linearizable
                (a partial closer: at most what it leaves).

                """);
        for (LinearizabilityCheck check : LinearizabilityCheck.values()) {
            List<Row> mine = rows.stream().filter(r -> r.check() == check).toList();
            b.append("## ").append(check.component().packageName()).append(" (").append(check).append(")\n\n");
            b.append("Operations: ").append(check.operations()).append(".\n\n");
            b.append("Races: ").append(check.races().stream().map(Race::name).collect(Collectors.joining(", "))).append(".\n\n");
            Row deepest = mine.get(mine.size() > 1 && mine.get(1).fixSet().startsWith("every fix, ") ? 1 : 0);
            b.append("Bounds of the `").append(deepest.fixSet()).append("` row (").append(String.format(Locale.ROOT, "%,d", deepest.result().histories()))
                    .append(" histories in ").append(String.format(Locale.ROOT, "%.1f s", deepest.result().millis() / 1000.0)).append("):\n\n");
            deepest.result().bounds().forEach(bd -> b.append("- ").append(bd).append('\n'));
            b.append("\n| fix set | what it is | must be | verdict | programs | histories | time | as expected |\n|---|---|---|---|---|---|---|---|\n");
            for (Row r : mine) {
                ProofResult p = r.result();
                String verdict = p.failed() ? "not linearizable: " + shortReason(p) + (r.attributed().isEmpty() ? ""
                        : " (" + r.attributed().stream().map(Race::name).collect(Collectors.joining(", ")) + ")") : "linearizable within the bound";
                b.append("| ").append(r.fixSet()).append(" | ").append(cell(r.meaning())).append(" | ").append(r.expect().label())
                        .append(" | ").append(cell(verdict)).append(" | ").append(String.format(Locale.ROOT, "%,d", p.programs()))
                        .append(" | ").append(String.format(Locale.ROOT, "%,d", p.histories())).append(" | ")
                        .append(String.format(Locale.ROOT, "%.1f s", p.millis() / 1000.0)).append(" | ").append(r.agrees() ? "yes" : "**NO**")
                        .append(" |\n");
            }
            b.append('\n');
            for (Row r : mine) {
                if (r.result().failed()) {
                    ProofResult.Counterexample c = r.result().counterexample();
                    b.append("### ").append(check).append(": ").append(r.fixSet()).append("\n\n");
                    b.append(c.reason()).append("\n\nSmallest program: ").append(c.program()).append("\n\n```\n");
                    c.history().forEach(line -> b.append(line).append('\n'));
                    b.append("```\n\n");
                }
            }
        }
        try {
            Files.writeString(results.resolve("linearizability.md"), b.toString(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String shortReason(ProofResult p) {
        String reason = p.counterexample().reason();
        int kinds = reason.indexOf('[');
        return reason.startsWith("invariant broken: ") ? "invariant broken" + (kinds > 0 ? " " + reason.substring(kinds, Math.min(reason.length(), reason.indexOf(']', kinds) + 1)) : "")
                : "no order gives its results";
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }
}
