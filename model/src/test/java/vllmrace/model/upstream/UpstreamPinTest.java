package vllmrace.model.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import vllmrace.model.fix.Fix;

/** A pin is "this file version, plus these merged PRs read from their diffs": the plus list is well formed and honest. */
class UpstreamPinTest {

    @Test
    void plusPrsReadHashNumberOnceInPrOrder() {
        for (UpstreamPin pin : UpstreamPin.values()) {
            List<String> plus = pin.plusPrs();
            assertTrue(plus.stream().allMatch(pr -> pr.matches("#[1-9][0-9]*")), pin + ": " + plus);
            List<Integer> numbers = plus.stream().map(pr -> Integer.parseInt(pr.substring(1))).toList();
            assertEquals(numbers.stream().sorted().distinct().toList(), numbers, pin + ": plus PRs once each, in PR order");
        }
    }

    /** A proposal is never part of what a pin says the model mirrors: a plus PR that is a fix's is a merged fix's. */
    @Test
    void aPlusPrThatIsAFixsIsMerged() {
        for (UpstreamPin pin : UpstreamPin.values()) {
            for (String pr : pin.plusPrs()) {
                for (Fix fix : Fix.values()) {
                    if (fix.provenance().reference().equals(pr)) {
                        assertTrue(fix.provenance().merged(), pin + " names " + pr + ", which is " + fix + ", not merged");
                    }
                }
            }
        }
    }

    /**
     * The merged fixes the model reads from their diffs on top of a pinned version are in its pins' plus lists: the
     * scheduler's, pinned at 00024d31 (before them), and #47505 on the LMCache MP pin (474b0b8c is before it).
     */
    @Test
    void theMergedFixesAfterAPinnedVersionAreItsPlusPrs() {
        Set<String> schedulerPlus = Arrays.stream(UpstreamPin.values()).filter(p -> p.file().equals("vllm/v1/core/sched/scheduler.py"))
                .peek(p -> assertEquals("00024d31", p.commit().substring(0, 8)))
                .flatMap(p -> p.plusPrs().stream()).collect(Collectors.toSet());
        for (Fix fix : List.of(Fix.DEFER_BLOCK_FREE, Fix.STALE_OUTPUT_AFTER_PREEMPT, Fix.REQUIRES_KV_DELIVERY,
                Fix.HAS_REQUESTS_COUNTS_DELAY_FREED, Fix.STOP_PREEMPTION_AT_FENCED_VICTIM)) {
            assertTrue(fix.provenance().merged(), fix.name());
            assertTrue(schedulerPlus.contains(fix.provenance().reference()), fix + " (" + fix.provenance().reference()
                    + ") is mirrored on top of scheduler.py@00024d31 but no scheduler pin names it");
        }
        assertEquals(List.of(Fix.LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN.provenance().reference()),
                UpstreamPin.LMCACHE_MP_UPDATE_STATE_AFTER_ALLOC.plusPrs());
        assertEquals(List.of("#35781", "#45357", "#48245", "#49675", "#50297"), UpstreamPin.SCHEDULER_SCHEDULE.plusPrs());
    }
}
