package vllmrace.races;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.model.upstream.UpstreamPins;

/** The pins: well-formed, each entered by the model method that mirrors it, and the race map the catalogue writes. */
class UpstreamPinUseTest {
    private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}");
    private static final Pattern FINGERPRINT = Pattern.compile("[0-9a-f]{16}");

    @Test
    void everyPinIsWellFormed() {
        for (UpstreamPin pin : UpstreamPin.values()) {
            assertTrue(COMMIT.matcher(pin.commit()).matches(), pin + ": " + pin.commit());
            assertTrue(FINGERPRINT.matcher(pin.fingerprint()).matches(), pin + ": " + pin.fingerprint());
            assertTrue(pin.file().startsWith("vllm/") && pin.file().endsWith(".py"), pin + ": " + pin.file());
            assertFalse(pin.qualname().isBlank() || pin.qualname().startsWith(".") || pin.qualname().endsWith("."), pin.qualname());
        }
    }

    @Test
    void theRacesEnterTheirPinsAndTheMapNamesTheMirroringMethod() {
        List<UpstreamPinUse.Use> uses = UpstreamPinUse.compute(List.of(Race.values()));
        assertEquals(UpstreamPin.values().length, uses.size());
        UpstreamPinUse.Use update = uses.get(UpstreamPin.SCHEDULER_UPDATE_FROM_OUTPUT.ordinal());
        assertEquals("Scheduler.updateFromOutput", update.modelMethod());
        assertTrue(update.races().contains(Race.DoubleFreeOnAbortedAsyncSave), update.toString());
        UpstreamPinUse.Use add = uses.get(UpstreamPin.OUTPUT_PROCESSOR_ADD_REQUEST.ordinal());
        assertTrue(add.races().contains(Race.DuplicateIdAbortWindow), add.toString());
        assertFalse(add.races().contains(Race.LateLoadCompletionUnion), "a connector race never adds through the frontend");
        List<UpstreamPin> unused = new ArrayList<>();
        uses.stream().filter(u -> u.races().isEmpty()).forEach(u -> unused.add(u.pin()));
        // pins no race runs through: entered by unit-level model paths only (the load-failure policy, the touch of a block)
        assertTrue(unused.size() < uses.size() / 4, "most pins are on the races' paths; unused: " + unused);
    }

    @Test
    void everyPinIsEnteredByExactlyOneModelMethod() {
        // the races and a few direct calls reach every pin; each pin names one method
        Map<UpstreamPin, String> seen = UpstreamPins.record(() -> {
            for (Race race : Race.values()) {
                for (Schedule schedule : Schedule.all(race.scenario(Variant.REPORTED))) {
                    schedule.run(race.scenario(Variant.REPORTED), false);
                }
            }
            PinReach.unitPaths();
        });
        List<UpstreamPin> missing = new ArrayList<>(List.of(UpstreamPin.values()));
        missing.removeAll(seen.keySet());
        assertEquals(List.of(), missing, "a pin no model method enters is stale: remove it or add its enter()");
        seen.forEach((pin, method) -> assertTrue(method.matches("[A-Z][A-Za-z0-9]+\\.[a-z][A-Za-z0-9]*"), pin + " entered by " + method));
    }

    @Test
    void recordingIsNotReentrant() {
        assertThrows(IllegalStateException.class, () -> UpstreamPins.record(() -> UpstreamPins.record(() -> { })));
        assertEquals(Map.of(), UpstreamPins.record(() -> { }), "nothing entered, nothing recorded");
    }
}
