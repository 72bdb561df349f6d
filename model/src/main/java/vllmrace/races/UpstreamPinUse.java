package vllmrace.races;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/**
 * Which races go through each pinned upstream function: every schedule of each race's scenario, reported and fixed, at
 * every point of its family, run with {@link UpstreamPins#record} on. Whoever changes a pinned function upstream re-checks
 * the races listed against it.
 */
public final class UpstreamPinUse {
    /** A pin, the model method that mirrors it, and the races whose runs enter it (registry order). */
    public record Use(UpstreamPin pin, String modelMethod, List<Race> races) {
    }

    private UpstreamPinUse() {
    }

    /** Every pin in declaration order; a pin no race enters has an empty race list (its model method found by {@link PinReach}). */
    public static List<Use> compute(List<Race> races) {
        Map<UpstreamPin, String> methods = new LinkedHashMap<>();
        Map<UpstreamPin, Set<Race>> byPin = new LinkedHashMap<>();
        for (Race race : races) {
            Map<UpstreamPin, String> entered = UpstreamPins.record(() -> {
                for (Variant variant : List.of(Variant.REPORTED, Variant.FIXED)) {
                    for (Params point : race.grid()) {
                        for (Schedule schedule : Schedule.all(race.scenario(race.fixes(variant), point))) {
                            schedule.run(race.scenario(race.fixes(variant), point), false);
                        }
                    }
                }
            });
            entered.forEach((pin, method) -> {
                methods.putIfAbsent(pin, method);
                byPin.computeIfAbsent(pin, p -> new LinkedHashSet<>()).add(race);
            });
        }
        UpstreamPins.record(PinReach::unitPaths).forEach(methods::putIfAbsent); // the model method of a pin no race reaches
        List<Use> uses = new ArrayList<>();
        for (UpstreamPin pin : UpstreamPin.values()) {
            uses.add(new Use(pin, methods.getOrDefault(pin, ""), List.copyOf(byPin.getOrDefault(pin, Set.of()))));
        }
        return uses;
    }
}
