package vllmrace.lincheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import vllmrace.lincheck.LinearizabilityProofs.Expect;
import vllmrace.lincheck.LinearizabilityProofs.Row;
import vllmrace.lincheck.prove.Depth;
import vllmrace.model.deploy.Profile;
import vllmrace.races.Race;

/**
 * The fix-switch matrix of linearizability at the smallest bound ({@link Depth#SHAPE}): each row's bounded-exhaustive
 * verdict is what the race registry says (./catalogue --prove runs the same rows at larger bounds). vLLM main's row per
 * profile must agree with the race table's vLLM-main column.
 */
class LinearizabilityProofsTest {

    static Stream<Arguments> profiles() {
        return Stream.of(LinearizabilityCheck.values()).flatMap(c -> Stream.of(Profile.values()).map(p -> Arguments.of(c, p)));
    }

    @ParameterizedTest(name = "{0} on {1}: linearizable iff no race of the check is racy there")
    @MethodSource("profiles")
    void vllmMainAgreesWithTheRaceTable(LinearizabilityCheck check, Profile profile) {
        Row row = LinearizabilityProofs.profile(check, profile, Depth.SHAPE);
        Set<Race> racy = LinearizabilityProofs.racyOn(check, profile);
        System.out.println(check + " " + profile.id() + ": " + row.result().figures());
        assertEquals(!racy.isEmpty(), row.result().failed(), check + " on " + profile.label() + ", racy there: " + racy + "; "
                + row.result().figures());
        assertTrue(row.agrees(), "broke an invariant of " + row.attributed() + ", none racy on " + profile.label() + " (" + racy + ")");
        assertTrue(row.result().histories() > 0, "vacuous");
    }

    static Stream<Arguments> checks() {
        return Stream.of(LinearizabilityCheck.values()).map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}: each closer alone on top of its race's reported switches, as the registry says")
    @MethodSource("checks")
    void eachCloserAloneIsAsTheRegistrySays(LinearizabilityCheck check) {
        List<Row> rows = LinearizabilityProofs.rows(check, Depth.SHAPE, Depth.SHAPE).stream().filter(r -> r.fixSet().contains(" + "))
                .toList();
        assertFalse(rows.isEmpty(), "no closer row");
        for (Row row : rows) {
            assertTrue(row.agrees(), row.fixSet() + " must be " + row.expect().label() + ": " + row.result().figures());
            if (row.expect() == Expect.LINEARIZABLE) {
                assertTrue(row.result().complete() && row.result().histories() > 0, row.fixSet() + " vacuous: " + row.result().figures());
            }
        }
    }
}
