package vllmrace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import vllmrace.model.detect.ViolationKind;

/**
 * Whatever the code cites lives in the repository: every {@code §N} reference resolves to a section of
 * docs/lifecycle.md, every invariant a detector names is defined in its §5, and nothing points at a document outside
 * the repository.
 */
class DocsReferenceTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern REFERENCE = Pattern.compile("§(\\d+(?:\\([a-z]+\\))*)");
    private static final Pattern HEADING = Pattern.compile("(?m)^#{2,4} (\\d+(?:\\([a-z]+\\))*) ");

    @Test
    void everySectionReferenceResolvesInDocsLifecycle() throws IOException {
        String doc = Files.readString(ROOT.resolve("docs/lifecycle.md"));
        Set<String> sections = new TreeSet<>();
        Matcher h = HEADING.matcher(doc);
        while (h.find()) {
            sections.add(h.group(1));
        }
        assertTrue(sections.containsAll(List.of("1", "1(b)", "1(d)", "2", "2(b)", "2(c)(ii)", "2(c)(iii)", "3", "3(b)", "3(c)", "4", "5")),
                sections.toString());
        List<String> dangling = new ArrayList<>();
        int references = 0;
        for (Path file : cited()) {
            Matcher m = REFERENCE.matcher(Files.readString(file));
            while (m.find()) {
                references++;
                if (!sections.contains(m.group(1))) {
                    dangling.add(ROOT.relativize(file) + ": §" + m.group(1));
                }
            }
        }
        assertTrue(references > 20, "the scan found only " + references + " references: is it reading the sources?");
        assertEquals(List.of(), dangling, "references with no section in docs/lifecycle.md");
    }

    @Test
    void everyInvariantADetectorNamesIsDefinedInSection5() throws IOException {
        String doc = Files.readString(ROOT.resolve("docs/lifecycle.md"));
        String invariants = doc.substring(doc.indexOf("## 5 Invariants"));
        for (ViolationKind kind : ViolationKind.values()) {
            assertTrue(invariants.contains("**" + kind.invariant() + "**"), kind + "'s invariant " + kind.invariant()
                    + " is not defined in docs/lifecycle.md §5");
        }
    }

    @Test
    void nothingCitesADocumentOutsideTheRepository() throws IOException {
        List<String> outside = new ArrayList<>();
        for (Path file : cited()) {
            String text = Files.readString(file);
            for (String marker : List.of("reference/", "../shared", "research-", "reference §")) {
                if (text.contains(marker)) {
                    outside.add(ROOT.relativize(file) + " mentions '" + marker + "'");
                }
            }
        }
        assertEquals(List.of(), outside);
    }

    /** The sources, the README and docs/, as a new maintainer reads them (generated results are not cited text). */
    private static List<Path> cited() throws IOException {
        List<Path> files = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        for (String dir : List.of("model/src", "lincheck-tests/src", "stress-tests/src", "results/src", "docs")) {
            try (Stream<Path> walk = Files.walk(ROOT.resolve(dir))) {
                walk.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".md"))
                        .filter(p -> !p.endsWith("DocsReferenceTest.java")).forEach(files::add);
            }
        }
        return files;
    }
}
