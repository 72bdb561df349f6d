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
        if (args.length != 5 && args.length != 6) {
            throw new IllegalArgumentException("usage: VerdictTestSources <ENGINE> <package> <class> <check class> <output root> [parts]");
        }
        Engine engine = Engine.valueOf(args[0]);
        int parts = args.length == 6 ? Integer.parseInt(args[5]) : 1;
        if (parts < 1) {
            throw new IllegalArgumentException("parts must be >= 1, got " + parts);
        }
        for (int part = 1; part <= parts; part++) {
            String className = partClassName(args[2], part, parts);
            Path file = Path.of(args[4]).resolve(args[1].replace('.', '/')).resolve(className + ".java");
            Files.createDirectories(file.getParent());
            Files.writeString(file, source(engine, args[1], className, args[3], part, parts));
        }
    }

    static String source(Engine engine, String pkg, String className, String check) {
        return source(engine, pkg, className, check, 1, 1);
    }

    /**
     * The class name of part {@code part}: {@code LincheckVerdictsTest} becomes {@code LincheckVerdictsPart1Test}, so it
     * still ends in {@code Test} and Surefire's default includes run it (a name they miss is a silent pass).
     */
    public static String partClassName(String className, int part, int parts) {
        if (parts == 1) {
            return className;
        }
        String stem = className.endsWith("Test") ? className.substring(0, className.length() - 4) : className;
        return stem + "Part" + part + "Test";
    }

    /**
     * The class of part {@code part} of {@code parts}: the cells of every {@code parts}-th race (by registry order), so
     * Surefire can run the parts in parallel forks.
     */
    static String source(Engine engine, String pkg, String className, String check, int part, int parts) {
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
                .append("@DisplayName(\"").append(engine.label()).append(" verdicts")
                .append(parts == 1 ? "" : " (part " + part + " of " + parts + ")").append("\")\n")
                .append("@TestMethodOrder(MethodOrderer.OrderAnnotation.class)\n")
                .append("class ").append(className).append(" {\n");
        List<Subject> cells = Cells.verdicts(engine, Shard.ALL).stream()
                .filter(c -> c.race().ordinal() % parts == part - 1).toList();
        for (int i = 0; i < cells.size(); i++) {
            Subject cell = cells.get(i);
            Race race = cell.race();
            String subject = cell.only() != null
                    ? "Subject.onlyCloser(Race." + race.name() + ", vllmrace.model.fix.Fix." + cell.only().name() + ")"
                    : cell.profile() != null
                    ? "Subject.onMain(Race." + race.name() + ", vllmrace.model.deploy.Profile." + cell.profile().name() + ")"
                    : "Subject.of(Race." + race.name() + ", Variant." + cell.variant().name() + ")";
            java.append("\n    @Test\n    @Order(").append(i + 1).append(")\n")
                    .append("    @DisplayName(\"").append(race.name()).append(" [").append(engine.label()).append(", ")
                    .append(cell.variantLabel()).append("]\")\n")
                    .append("    void ").append(Character.toLowerCase(race.name().charAt(0))).append(race.name().substring(1))
                    .append('_').append(cell.variantLabel().replaceAll("[^A-Za-z0-9]+", "_").toLowerCase()).append("() throws Exception {\n")
                    .append("        ").append(check).append(".verdict(").append(subject).append(");\n    }\n");
        }
        return java.append("}\n").toString();
    }
}
