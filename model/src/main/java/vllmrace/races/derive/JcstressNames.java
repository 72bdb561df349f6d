package vllmrace.races.derive;

import vllmrace.races.Race;
import vllmrace.races.Variant;

/** The names of the JCStress tests generated for each race ({@link JcstressSources}), as the runner and the results read them. */
public final class JcstressNames {
    private JcstressNames() {
    }

    /** The JCStress test class of one variant: {@code vllmrace.stress.<component>.<Race>.<Variant>}. */
    public static String testName(Race race, Variant variant) {
        return className(race) + "." + variant.className();
    }

    /** The generated JCStress class holding this race's variants. */
    public static String className(Race race) {
        return "vllmrace.stress." + race.component().packageName() + "." + race.name();
    }
}
