package vllmrace.races.derive;

import vllmrace.races.Stories;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import vllmrace.races.Race;

/**
 * Build step (the model module's {@code process-classes}): writes each race's story, its scenario's header, to
 * {@code vllmrace/races/stories/<Race>.md} on the class path, so {@link Race#story()} and everything derived from it
 * (the JCStress tests' comments, the catalogue's lines, the trace pages) read the one text the scenario holds.
 *
 * <p>Usage: {@code StoryIndex <source root> <classes dir>}.
 */
public final class StoryIndex {
    private StoryIndex() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: StoryIndex <source root> <classes dir>");
        }
        Path sources = Path.of(args[0]);
        Path out = Path.of(args[1]).resolve(Stories.DIR);
        Files.createDirectories(out);
        for (Race race : Race.values()) {
            Files.writeString(out.resolve(race.name() + ".md"), ScenarioHeader.read(sources, race.scenarioClass()));
        }
    }
}
