package vllmrace.catalogue.drift;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import vllmrace.catalogue.drift.Result.Status;

/** One aligned line per pin, diffs indented under their CHANGED line, and a count of each status. */
class DriftReportTest {
    private static Pin pin(String file, String qualname) {
        return new Pin(file, qualname, PinTest.COMMIT, PinTest.PRINT);
    }

    @Test
    void alignedLinesDiffsBelowTheirPinAndASummary() {
        String diff = "--- vllm/v1/request.py@00024d31\n+++ vllm/v1/request.py (checkout)\n@@ -1,1 +1,1 @@\n-a\n+b";
        List<Result> results = List.of(
                new Result(pin("vllm/v1/core/sched/scheduler.py", "Scheduler.update_from_output"), Status.UNCHANGED,
                        "unchanged since 00024d31"),
                new Result(pin("vllm/v1/request.py", "Request.append_output_token_ids"), Status.CHANGED, diff),
                new Result(pin("vllm/v1/engine/core.py", "EngineCore.step"), Status.CHANGED,
                        "changed since 00024d31 (no diff: that commit is not in this checkout)"),
                new Result(pin("vllm/x.py", "f"), Status.GONE, "file vllm/x.py is gone"));
        assertEquals(String.join("\n",
                "UNCHANGED  vllm/v1/core/sched/scheduler.py  Scheduler.update_from_output     unchanged since 00024d31",
                "CHANGED    vllm/v1/request.py               Request.append_output_token_ids  changed since 00024d31",
                "    --- vllm/v1/request.py@00024d31",
                "    +++ vllm/v1/request.py (checkout)",
                "    @@ -1,1 +1,1 @@",
                "    -a",
                "    +b",
                "CHANGED    vllm/v1/engine/core.py           EngineCore.step                  "
                        + "changed since 00024d31 (no diff: that commit is not in this checkout)",
                "GONE       vllm/x.py                        f                                file vllm/x.py is gone",
                "4 pins: 1 unchanged, 2 changed, 1 gone"),
                DriftReport.render(results));
    }

    @Test
    void missingPinsAreCountedApartFromGoneOnes() {
        List<Result> results = List.of(
                new Result(pin("vllm/x.py", "f"), Status.MISSING, "not checked: vllm/x.py is not in this checkout"),
                new Result(pin("vllm/y.py", "g"), Status.UNCHANGED, "unchanged since 00024d31"));
        assertEquals(String.join("\n",
                        "MISSING    vllm/x.py  f  not checked: vllm/x.py is not in this checkout",
                        "UNCHANGED  vllm/y.py  g  unchanged since 00024d31",
                        "2 pins: 1 unchanged, 0 changed, 0 gone, 1 not checked (file not in the checkout)"),
                DriftReport.render(results));
    }

    @Test
    void aMultiLineDetailKeepsItsFirstLineInTheRow() {
        List<Result> results = List.of(new Result(pin("vllm/x.py", "f"), Status.CHANGED, "the pin is wrong\n--- a\n+++ b"));
        assertEquals("CHANGED  vllm/x.py  f  the pin is wrong\n    --- a\n    +++ b\n1 pin: 0 unchanged, 1 changed, 0 gone",
                DriftReport.render(results));
    }

    @Test
    void noPins() {
        assertEquals("0 pins: 0 unchanged, 0 changed, 0 gone", DriftReport.render(List.of()));
    }
}
