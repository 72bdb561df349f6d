package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import vllmrace.races.Cells;
import vllmrace.races.Engine;
import vllmrace.races.Shard;
import vllmrace.races.Subject;
import vllmrace.races.derive.VerdictTestSources;

/**
 * The generated Lincheck verdict classes hold one test per cell the registry gives Lincheck, and their names end in
 * {@code Test}, so Surefire's default includes run them: a class it does not pick up would pass silently.
 */
class GeneratedVerdictTestsTest {
    private static final int PARTS = 2;

    @Test
    void theGeneratedPartsCoverEveryLincheckCellAndSurefireRunsThem() throws Exception {
        List<String> names = new ArrayList<>();
        for (int part = 1; part <= PARTS; part++) {
            String simple = VerdictTestSources.partClassName("LincheckVerdictsTest", part, PARTS);
            assertTrue(simple.endsWith("Test"), simple + " would be missed by Surefire's default includes");
            Class<?> generated = Class.forName("vllmrace.lincheck." + simple);
            for (Method m : generated.getDeclaredMethods()) {
                if (m.isAnnotationPresent(Test.class)) {
                    names.add(m.getAnnotation(DisplayName.class).value());
                }
            }
        }
        List<Subject> cells = Cells.verdicts(Engine.LINCHECK, Shard.ALL);
        assertEquals(cells.size(), names.size(), "one test per cell");
        for (Subject cell : cells) {
            String name = cell.race().name() + " [Lincheck, " + cell.variantLabel() + "]";
            assertTrue(names.contains(name), "no generated test for " + name);
        }
    }
}
