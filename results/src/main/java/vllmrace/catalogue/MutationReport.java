package vllmrace.catalogue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * {@code ./catalogue --mutation}: runs PIT over the model's fix sites and detectors (the model module's
 * {@code mutation} profile, the model's own tests, the exhaustive enumerator among them), then writes
 * results/mutation.md: the score per class and every mutant that survived, each with the reason it is equivalent
 * from {@code model/src/test/pit/equivalent-mutants.tsv}. Exit 1 when the score is under {@link #TARGET_PERCENT},
 * when a survivor has no reason (add a test, or a reason), or when a reason matches fewer survivors than its count (a
 * test now kills one: lower the count or delete the line).
 */
final class MutationReport {
    static final double TARGET_PERCENT = 95.0;
    static final String EQUIVALENTS = "model/src/test/pit/equivalent-mutants.tsv";
    static final String COMMAND = "mvn -B -q -Pmutation -pl model test-compile org.pitest:pitest-maven:mutationCoverage";

    /** One PIT mutant. {@code detected}: PIT's KILLED, TIMED_OUT, MEMORY_ERROR or RUN_ERROR. */
    record Mutant(String className, String method, int line, String mutator, String description, String status) {
        boolean detected() {
            return status.equals("KILLED") || status.equals("TIMED_OUT") || status.equals("MEMORY_ERROR") || status.equals("RUN_ERROR");
        }

        String simpleClass() {
            return className.substring(className.lastIndexOf('.') + 1);
        }
    }

    /**
     * A line of the equivalents file: {@code count} undetected mutants of {@code method} whose description starts so. The
     * count keeps a reason from covering a new survivor of the same shape: a survivor past it has no reason.
     */
    record Equivalent(String simpleClass, String method, String descriptionPrefix, int count, String reason) {
        boolean matches(Mutant m) {
            return m.simpleClass().equals(simpleClass) && m.method().equals(method) && m.description().startsWith(descriptionPrefix);
        }
    }

    private final Path root;
    private final Path results;
    private final Terminal out = new Terminal();

    MutationReport(Path results) {
        this.results = results;
        this.root = results.toAbsolutePath().getParent();
    }

    int run() throws IOException, InterruptedException {
        Path log = results.resolve("target/pit.log");
        Files.createDirectories(log.getParent());
        out.line("running PIT over the model (" + COMMAND + "; about 5 minutes on 2 CPUs)");
        long start = System.nanoTime();
        Process pit = new ProcessBuilder(COMMAND.split(" ")).directory(root.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (pit.waitFor() != 0) {
            System.err.println("catalogue: PIT failed (its output: " + root.relativize(log.toAbsolutePath()) + ")");
            return 3;
        }
        long seconds = (System.nanoTime() - start) / 1_000_000_000L;
        List<Mutant> mutants = parse(root.resolve("model/target/pit-reports/mutations.xml"));
        List<Equivalent> equivalents = equivalents(Files.readAllLines(root.resolve(EQUIVALENTS)));
        Summary summary = summarise(mutants, equivalents);
        Files.writeString(results.resolve("mutation.md"), render(summary, seconds));
        out.line(summary.headline());
        summary.unexplained().forEach(m -> out.line("  survived, no reason: " + where(m) + " " + m.description()));
        summary.stale().forEach(e -> out.line("  reason stands for " + e.count() + " survivor(s), fewer match (a test kills one now: lower its count or "
                + "delete it): " + e.simpleClass() + "." + e.method() + " " + e.descriptionPrefix()));
        out.line("written: results/mutation.md");
        return summary.ok() ? 0 : 1;
    }

    static List<Mutant> parse(Path xml) throws IOException {
        try {
            var doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(xml.toFile());
            NodeList nodes = doc.getElementsByTagName("mutation");
            List<Mutant> mutants = new ArrayList<>();
            for (int i = 0; i < nodes.getLength(); i++) {
                Element e = (Element) nodes.item(i);
                mutants.add(new Mutant(text(e, "mutatedClass"), text(e, "mutatedMethod"), Integer.parseInt(text(e, "lineNumber")),
                        text(e, "mutator"), text(e, "description"), e.getAttribute("status")));
            }
            return mutants;
        } catch (javax.xml.parsers.ParserConfigurationException | org.xml.sax.SAXException e) {
            throw new IOException(xml + ": not a PIT mutations.xml: " + e.getMessage(), e);
        }
    }

    private static String text(Element e, String tag) {
        return e.getElementsByTagName(tag).item(0).getTextContent().trim();
    }

    static List<Equivalent> equivalents(List<String> lines) {
        List<Equivalent> list = new ArrayList<>();
        for (String line : lines) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t");
            if (f.length != 5 || !f[3].matches("[1-9][0-9]*") || f[4].isBlank()) {
                throw new IllegalArgumentException(EQUIVALENTS + ": want class<TAB>method<TAB>description prefix<TAB>count<TAB>reason, got: " + line);
            }
            list.add(new Equivalent(f[0], f[1], f[2], Integer.parseInt(f[3]), f[4]));
        }
        return list;
    }

    record Summary(List<Mutant> mutants, Map<Mutant, Equivalent> explained, List<Mutant> unexplained, List<Equivalent> stale) {
        long detected() {
            return mutants.stream().filter(Mutant::detected).count();
        }

        double percent() {
            return mutants.isEmpty() ? 0 : 100.0 * detected() / mutants.size();
        }

        boolean ok() {
            return !mutants.isEmpty() && percent() >= TARGET_PERCENT && unexplained.isEmpty() && stale.isEmpty();
        }

        String headline() {
            return String.format("PIT: %d of %d mutants killed (%.1f %%, target %.0f %%); %d survivors equivalent with a reason, %d without",
                    detected(), mutants.size(), percent(), TARGET_PERCENT, explained.size(), unexplained.size());
        }
    }

    static Summary summarise(List<Mutant> mutants, List<Equivalent> equivalents) {
        Map<Mutant, Equivalent> explained = new LinkedHashMap<>();
        List<Mutant> unexplained = new ArrayList<>();
        for (Mutant m : mutants) {
            if (m.detected()) {
                continue;
            }
            equivalents.stream().filter(e -> e.matches(m) && uses(explained, e) < e.count()).findFirst()
                    .ifPresentOrElse(e -> explained.put(m, e), () -> unexplained.add(m));
        }
        List<Equivalent> stale = equivalents.stream().filter(e -> uses(explained, e) < e.count()).toList();
        return new Summary(List.copyOf(mutants), explained, unexplained, stale);
    }

    private static long uses(Map<Mutant, Equivalent> explained, Equivalent e) {
        return explained.values().stream().filter(e::equals).count();
    }

    private static String where(Mutant m) {
        return m.simpleClass() + "." + m.method() + ":" + m.line();
    }

    static String render(Summary s, long seconds) {
        StringBuilder md = new StringBuilder();
        md.append("# Mutation testing of the model\n\n")
                .append("Written by `./catalogue --mutation`, which runs `").append(COMMAND).append("`: PIT mutates the\n")
                .append("model's fix sites and detectors (the classes listed in model/pom.xml's `mutation` profile) and runs the\n")
                .append("model module's tests against each mutant. A mutant is killed when a test fails. Each survivor needs a\n")
                .append("test or a reason it is equivalent, in `").append(EQUIVALENTS).append("`.\n\n")
                .append(s.headline()).append(". PIT took ").append(seconds).append(" s.\n\n");
        md.append("| class | mutants | killed | survived | no coverage | killed % |\n|---|---:|---:|---:|---:|---:|\n");
        Map<String, List<Mutant>> byClass = new TreeMap<>();
        s.mutants().forEach(m -> byClass.computeIfAbsent(m.simpleClass(), k -> new ArrayList<>()).add(m));
        byClass.forEach((cls, ms) -> {
            long killed = ms.stream().filter(Mutant::detected).count();
            long noCoverage = ms.stream().filter(m -> m.status().equals("NO_COVERAGE")).count();
            md.append(String.format("| %s | %d | %d | %d | %d | %.1f |%n", cls, ms.size(), killed, ms.size() - killed - noCoverage,
                    noCoverage, 100.0 * killed / ms.size()));
        });
        md.append("\n## Survivors\n\n");
        if (!s.unexplained().isEmpty()) {
            md.append("Without a reason (add a test that kills it, or a reason):\n\n");
            s.unexplained().forEach(m -> md.append("- `").append(where(m)).append("` ").append(m.description())
                    .append(" (").append(m.status()).append(")\n"));
            md.append('\n');
        }
        md.append("| where | mutation | status | why it is equivalent |\n|---|---|---|---|\n");
        s.explained().forEach((m, e) -> md.append("| `").append(where(m)).append("` | ").append(m.description().replace("|", "\\|"))
                .append(" | ").append(m.status()).append(" | ").append(e.reason().replace("|", "\\|")).append(" |\n"));
        if (!s.stale().isEmpty()) {
            md.append("\nReasons that match fewer survivors than their count (a test kills the mutant now; lower the count or delete the line):\n\n");
            s.stale().forEach(e -> md.append("- ").append(e.simpleClass()).append('.').append(e.method()).append(' ').append(e.descriptionPrefix())
                    .append(" (stands for ").append(e.count()).append(")\n"));
        }
        return md.toString();
    }
}
