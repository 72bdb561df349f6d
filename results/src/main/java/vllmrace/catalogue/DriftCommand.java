package vllmrace.catalogue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import vllmrace.catalogue.drift.DriftCheck;
import vllmrace.catalogue.drift.DriftException;
import vllmrace.catalogue.drift.DriftReport;
import vllmrace.catalogue.drift.Pin;
import vllmrace.catalogue.drift.Result;
import vllmrace.model.upstream.UpstreamPin;
import vllmrace.races.Race;
import vllmrace.races.UpstreamPinUse;

/**
 * {@code ./catalogue --drift PATH}: each pinned upstream function looked up in the vLLM checkout at PATH (by parsing, not
 * by line numbers), reported unchanged, changed (with a short diff against the pinned version when the checkout has the
 * pin's commit, from its git history or from {@code --pinned DIR}) or gone, with the races to re-check for each one that
 * moved; a pinned file the checkout does not hold is reported missing, with no race list. Exit 0 nothing moved, 1
 * something changed or is gone, 2 bad input (one line).
 */
final class DriftCommand {
    private final Path checkout;
    private final Path pinnedDir;
    private final Terminal out = new Terminal();

    DriftCommand(Path checkout) {
        this(checkout, null);
    }

    /** @param pinnedDir the pinned texts as {@code <commit>/<file>}, or null to read them from the checkout's git history */
    DriftCommand(Path checkout, Path pinnedDir) {
        this.checkout = checkout;
        this.pinnedDir = pinnedDir;
    }

    /**
     * @throws DriftException for a path that does not exist or is not a vLLM checkout, a pinned-text directory that does
     *     not exist, or a checkout holding none of the pinned files (the caller exits 2)
     */
    int run() throws DriftException {
        DriftCheck check = pinnedDir == null ? DriftCheck.forCheckout(checkout) : DriftCheck.withPinnedDirectory(checkout, pinnedDir);
        List<Pin> pins = new ArrayList<>();
        for (UpstreamPin pin : UpstreamPin.values()) {
            pins.add(new Pin(pin.file(), pin.qualname(), pin.commit(), pin.fingerprint(), pin.plusPrs()));
        }
        List<Result> results = check.check(pins);
        if (results.stream().allMatch(r -> r.status() == Result.Status.MISSING)) {
            throw new DriftException(checkout + " holds none of the " + pins.stream().map(Pin::file).distinct().count()
                    + " pinned files (e.g. " + pins.get(0).file() + "): nothing to check");
        }
        out.line("Drift of " + pins.size() + " pinned upstream functions against " + checkout.toAbsolutePath().normalize()
                + (pinnedDir == null ? "" : " (pinned texts from " + pinnedDir.toAbsolutePath().normalize() + ")"));
        System.out.println(DriftReport.render(results));
        List<Result> moved = results.stream().filter(r -> r.status().moved()).toList();
        if (!moved.isEmpty()) {
            Map<String, UpstreamPinUse.Use> uses = UpstreamPinUse.compute(List.of(Race.values())).stream()
                    .collect(Collectors.toMap(u -> u.pin().file() + ":" + u.pin().qualname(), u -> u, (a, b) -> a));
            out.blank();
            out.line("Races to re-check:");
            for (Result r : moved) {
                UpstreamPinUse.Use use = uses.get(r.pin().file() + ":" + r.pin().qualname());
                out.line("  " + r.pin().qualname() + " (" + r.status().name().toLowerCase() + ", model " + use.modelMethod() + "): "
                        + (use.races().isEmpty() ? "no race; its unit tests" : use.races().stream().map(Race::name).collect(Collectors.joining(", "))));
            }
        }
        return DriftCheck.exitCode(results);
    }
}
