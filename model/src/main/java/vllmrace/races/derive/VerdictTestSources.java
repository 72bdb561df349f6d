package vllmrace.races.derive;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import vllmrace.races.Cells;
import vllmrace.races.Engine;
import vllmrace.races.Race;
import vllmrace.races.Shard;
import vllmrace.races.Subject;

/**
 * Build step (a module's {@code generate-test-sources}): writes one JUnit class with one test per race and variant an
 * engine judges, named {@code <Race> [<engine>, <variant>]}, so Surefire's XML (which writes display names) and a CI
 * dashboard list races, engines and variants. Each test is one call of the module's hand-written check class,
 * {@code <check>.verdict(race, variant)}, which holds the verdict plumbing and skips a race of another shard.
 *
 * <p>Usage: {@code VerdictTestSources <ENGINE> <package> <class> <check class> <output source root>}.
 */
public final class VerdictTestSources {
    private VerdictTestSources() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 5) {
            throw new IllegalArgumentException("usage: VerdictTestSources <ENGINE> <package> <class> <check class> <output root>");
        }
        Engine engine = Engine.valueOf(args[0]);
        Path file = Path.of(args[4]).resolve(args[1].replace('.', '/')).resolve(args[2] + ".java");
        Files.createDirectories(file.getParent());
        Files.writeString(file, source(engine, args[1], args[2], args[3]));
    }

    static String source(Engine engine, String pkg, String className, String check) {
        StringBuilder java = new StringBuilder("package ").append(pkg).append(";\n\n")
                .append("import org.junit.jupiter.api.DisplayName;\n")
                .append("import org.junit.jupiter.api.MethodOrderer;\n")
                .append("import org.junit.jupiter.api.Order;\n")
                .append("import org.junit.jupiter.api.Test;\n")
                .append("import org.junit.jupiter.api.TestMethodOrder;\n")
                .append("import vllmrace.races.Race;\n")
                .append("import vllmrace.races.Subject;\n")
                .append("import vllmrace.races.Variant;\n\n")
                .append("/**\n * Generated from the race registry by VerdictTestSources; do not edit. One test per race and variant that ")
                .append(engine.label()).append(" judges,\n * named {@code <Race> [").append(engine.label())
                .append(", <variant>]}; each is a call of {@link ").append(check).append("#verdict}.\n */\n")
                .append("@DisplayName(\"").append(engine.label()).append(" verdicts\")\n")
                .append("@TestMethodOrder(MethodOrderer.OrderAnnotation.class)\n")
                .append("class ").append(className).append(" {\n");
        List<Subject> cells = Cells.verdicts(engine, Shard.ALL);
        for (int i = 0; i < cells.size(); i++) {
            Subject cell = cells.get(i);
            Race race = cell.race();
            String subject = cell.only() == null ? "Subject.of(Race." + race.name() + ", Variant." + cell.variant().name() + ")"
                    : "Subject.onlyCloser(Race." + race.name() + ", vllmrace.model.fix.Fix." + cell.only().name() + ")";
            java.append("\n    @Test\n    @Order(").append(i + 1).append(")\n")
                    .append("    @DisplayName(\"").append(race.name()).append(" [").append(engine.label()).append(", ")
                    .append(cell.variantLabel()).append("]\")\n")
                    .append("    void ").append(Character.toLowerCase(race.name().charAt(0))).append(race.name().substring(1))
                    .append('_').append(cell.variantLabel().replace(' ', '_').toLowerCase()).append("() throws Exception {\n")
                    .append("        ").append(check).append(".verdict(").append(subject).append(");\n    }\n");
        }
        return java.append("}\n").toString();
    }
}
