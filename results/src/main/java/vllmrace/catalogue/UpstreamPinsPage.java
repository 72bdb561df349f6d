package vllmrace.catalogue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import vllmrace.races.Race;
import vllmrace.races.UpstreamPinUse;

/**
 * results/upstream-pins.md: each pinned upstream function, the model method that mirrors it, and the races whose runs go
 * through it ({@link UpstreamPinUse}), so whoever changes the function upstream knows which races to re-check.
 */
final class UpstreamPinsPage {
    static final String FILE = "upstream-pins.md";

    private UpstreamPinsPage() {
    }

    static String render(List<UpstreamPinUse.Use> uses) {
        StringBuilder md = new StringBuilder("# Upstream pins\n\n")
                .append("Written by `./catalogue`. Each upstream function the model mirrors, at the commit it was modelled on plus the\n")
                .append("merged PRs the model adds on top of that version from their diffs (\"+ #N\"), the\n")
                .append("model method that mirrors it (the one that calls `UpstreamPins.enter` for it) and the races whose step\n")
                .append("interleavings go through it (every schedule of the reported and fixed variants, every point of the family).\n")
                .append("`./catalogue --drift PATH` compares each function with a local vLLM checkout.\n\n")
                .append("| upstream function | file @ commit | model method | races |\n|---|---|---|---|\n");
        for (UpstreamPinUse.Use use : uses) {
            md.append("| `").append(use.pin().qualname()).append("` | `").append(use.pin().file()).append("` @ `")
                    .append(use.pin().commit(), 0, 8).append("`")
                    .append(use.pin().plusPrs().isEmpty() ? "" : " + " + String.join(", ", use.pin().plusPrs())).append(" | `").append(use.modelMethod().isEmpty() ? "(unit paths only)" : use.modelMethod())
                    .append("` | ").append(use.races().isEmpty() ? "none (reached by unit tests only)"
                            : use.races().stream().map(Race::name).collect(Collectors.joining(", "))).append(" |\n");
        }
        return md.toString();
    }

    static Path write(Path results, List<UpstreamPinUse.Use> uses) throws IOException {
        Path file = results.resolve(FILE);
        Files.writeString(file, render(uses));
        return file;
    }
}
