package vllmrace.races;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The replay page of a counterexample, {@code results/replays/<Race>.md}: the step log with the actor that ran each
 * step ({@link Schedule#tag}), which a vLLM developer can port to a Python unit test and {@code ReplayTest} runs back
 * as a {@link Schedule}. Written and read here only.
 */
public final class ReplayPage {
    /** A replay line: number, actor, then the step as the model logs it. */
    public static final Pattern STEP_LINE = Pattern.compile("^\\d+\\. \\[(actor 1|actor 2|arbiter)\\] (.*)$");

    /** A saved replay: the steps as logged (set-up excluded, arbiter included), and the actors' schedule. */
    public record Saved(List<String> steps, Schedule schedule) {
    }

    private ReplayPage() {
    }

    /** The page for {@code race}'s counterexample {@code steps} (found in {@code variant}), with what the detectors saw. */
    public static String render(Race race, Variant variant, List<String> steps, List<String> violations) {
        RaceScenario scenario = race.scenario(variant);
        StringBuilder page = new StringBuilder();
        page.append("# ").append(race.name()).append(": replay\n\n");
        page.append("Written by the suite from the Lincheck counterexample in [../traces/").append(race.name())
                .append(".md](../traces/").append(race.name()).append(".md); do not edit by hand.\n\n");
        page.append("Actor 1 runs `").append(scenario.actor1().task()).append("`, actor 2 runs `")
                .append(scenario.actor2().task()).append("`; the arbiter then lets EngineCore and the output handler ")
                .append("run to quiescence. Each step is named after the upstream function it performs, so the list ")
                .append("ports to a vLLM unit test: perform the steps in this order, awaiting where a step ends.\n\n");
        page.append("## Steps\n\n");
        List<Schedule.Tagged> tagged = Schedule.tag(scenario, steps);
        for (int i = 0; i < tagged.size(); i++) {
            page.append(i + 1).append(". [").append(tagged.get(i).who()).append("] ").append(tagged.get(i).entry()).append('\n');
        }
        page.append("\n## Expected\n\n");
        page.append("- ").append(variant.label()).append(" variant (fixes ON: ").append(race.fixes(variant))
                .append("): the race; the detectors record\n");
        for (String violation : violations) {
            page.append("  - ").append(violation).append('\n');
        }
        page.append("- Fixed variant (fixes ON: ").append(race.fixes(Variant.FIXED))
                .append("): the same actor order, no violation.\n\n");
        page.append("`ReplayTest` (module results) performs these steps on one thread and asserts both.\n");
        return page.toString();
    }

    /**
     * Reads a page back: its steps, and the actors' schedule with the step each ran.
     *
     * @throws IllegalArgumentException when a step tagged with an actor is not a step of that actor's task, or the page
     *                                  has no actor step
     */
    public static Saved read(Race race, List<String> lines) {
        RaceScenario scenario = race.scenario(Variant.REPORTED);
        List<String> steps = new ArrayList<>();
        for (String line : lines) {
            Matcher m = STEP_LINE.matcher(line);
            if (m.matches()) {
                steps.add(m.group(2));
                String who = Schedule.tag(scenario, List.of(m.group(2))).get(0).who();
                if (!who.equals(m.group(1))) {
                    throw new IllegalArgumentException("'" + m.group(2) + "' is tagged " + m.group(1) + " but is a step of " + who);
                }
            }
        }
        Schedule schedule = Schedule.fromSteps(scenario, steps);
        if (schedule.moves().isEmpty()) {
            throw new IllegalArgumentException(race + "'s replay page has no actor step");
        }
        return new Saved(steps, schedule);
    }
}
