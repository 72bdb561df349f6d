package vllmrace.lincheck;

import java.util.function.Function;
import vllmrace.lincheck.frontend.FrontendLinearizability;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.model.fix.FixSet;
import vllmrace.races.Component;
import vllmrace.races.Race;
import vllmrace.races.Variant;

/**
 * The linearizability checks: a component's public operations against a plain sequential specification, with
 * the component's invariants validated. Each is tied to the race whose switch makes it fail, so its reported
 * variant is asserted to fail (no vacuous pass) and its fixed variant to pass.
 */
public enum LinearizabilityCheck {
    FRONTEND(Component.FRONTEND, "AsyncLLM.add_request, AsyncLLM.abort, EngineCore busy loop, output handler; FE1/FE2 validated",
            Race.DuplicateIdAbortWindow, FrontendLinearizability::check);

    private final Component component;
    private final String operations;
    private final Race race;
    private final Function<FixSet, LincheckResult> check;

    LinearizabilityCheck(Component component, String operations, Race race, Function<FixSet, LincheckResult> check) {
        this.component = component;
        this.operations = operations;
        this.race = race;
        this.check = check;
    }

    public Component component() {
        return component;
    }

    public String operations() {
        return operations;
    }

    /** The race whose reported variant must make this check fail. */
    public Race race() {
        return race;
    }

    public LincheckResult run(Variant variant) {
        return check.apply(race.fixes(variant));
    }
}
