package vllmrace.races;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * A race's story: its scenario's header, as Markdown. The model module's build writes each to the class path
 * ({@code vllmrace.races.derive.StoryIndex}, from the header the scenario holds); everything that shows a story reads it
 * here.
 */
public final class Stories {
    /** Where the build puts the stories on the class path: {@code <DIR>/<Race>.md}. */
    public static final String DIR = "vllmrace/races/stories";

    private Stories() {
    }

    /** The race's story. */
    public static String of(Race race) {
        String resource = DIR + "/" + race.name() + ".md";
        try (InputStream in = Stories.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is not on the class path: build with Maven (the model "
                        + "module's process-classes phase writes it from " + race.scenarioClass().getSimpleName() + "'s header)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The story's first paragraph without the leading {@code <Race>: }: the race in one line. */
    public static String summary(Race race) {
        String first = of(race).strip().split("\\n\\s*\\n", 2)[0].replace('\n', ' ').strip();
        String prefix = race.name() + ": ";
        return first.startsWith(prefix) ? first.substring(prefix.length()) : first;
    }
}
