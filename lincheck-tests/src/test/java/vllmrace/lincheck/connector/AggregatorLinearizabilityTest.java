package vllmrace.lincheck.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import vllmrace.races.Shard;
import vllmrace.lincheck.connector.AggregatorLinearizability.Mode;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * The aggregator's operations against the exactly-once sequential specification. LinearizabilityTest runs the CONNECTOR
 * check (its four set-ups) with the reported switches of each race it lists (must fail) and with every fix on (must pass).
 * Here: each switch that matters to the aggregator, isolated; and that a clean run explored every order of the
 * operations' steps. That second test is needed because the reported variant already breaks the specification in a
 * sequential order, so its failing proves nothing about the interleavings explored.
 */
class AggregatorLinearizabilityTest {

    @org.junit.jupiter.api.BeforeAll
    static void inThisShard() {
        org.junit.jupiter.api.Assumptions.assumeTrue(Shard.current().includesIndex(vllmrace.lincheck.LinearizabilityCheck.CONNECTOR.ordinal()), "the CONNECTOR every-fix cell is another shard's");
    }

    /** Upstream's recv union, with only MULTI_CONNECTOR_LOAD_DEDUP off: R is reported before its last load completes. */
    @Test
    void recvUnionIsNotLinearizableWithOnlyLoadDedupOff() {
        LincheckResult result = AggregatorLinearizability.check(Mode.LOADS,
                FixSet.all().without(Fix.MULTI_CONNECTOR_LOAD_DEDUP), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertTrue(result.failed(), "the recv union reports R twice / before the last load: " + result.figures());
    }

    /** #46240 with only NO_SAVE_WHILE_LOADING off: an abort during the load starts a save, a second terminal event. */
    @Test
    void abortedLoadIsNotLinearizableWithOnlyNoSaveWhileLoadingOff() {
        LincheckResult result = AggregatorLinearizability.check(Mode.ABORTED_LOAD,
                FixSet.all().without(Fix.NO_SAVE_WHILE_LOADING), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertTrue(result.failed(), "the abort mid-load must start a save next to the pending recv: " + result.figures());
    }

    /** #54518 alone: the repeat report no longer kills the worker, but the failure still comes while handle 1 writes. */
    @Test
    void aPullOverTwoHandlesIsNotLinearizableWithOnlyTheDeferralOff() {
        LincheckResult result = AggregatorLinearizability.check(Mode.HANDLES,
                FixSet.all().without(Fix.DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertTrue(result.failed(), "R is reported failed before its sibling handle stopped: " + result.figures());
    }

    /** #56104 alone: the deferral reports once, after both handles; the repeat #54518 drops never arises. */
    @Test
    void aPullOverTwoHandlesIsLinearizableWithTheDeferralAlone() {
        LincheckResult result = AggregatorLinearizability.check(Mode.HANDLES,
                FixSet.all().without(Fix.FAILED_RECV_REPORTED_ONCE), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertFalse(result.failed(), result.report());
    }

    /** #58188 off, #56104 on (vLLM main): R's push completes and no collect reports it (PushSendNeverReported). */
    @Test
    void aPushIsNotLinearizableWithOnlyThePerDirectionReportOff() {
        LincheckResult result = AggregatorLinearizability.check(Mode.PUSH,
                FixSet.all().without(Fix.PUSH_SEND_REPORTED_PER_DIRECTION), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertTrue(result.failed(), "R's completed push is never reported: " + result.figures());
    }

    /** #57570 (and seed 003's (3)) off: the failed handshake of a notification-only entry is reported as a receive. */
    @Test
    void aNotificationIsNotLinearizableWithout57570() {
        LincheckResult result = AggregatorLinearizability.check(Mode.NOTIFY,
                FixSet.all().without(Fix.NOTIF_ONLY_NOT_RECV_TRACKED), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertTrue(result.failed(), "the empty receive is reported after its handshake failed: " + result.figures());
    }

    /** #50789 off (vLLM main): a heartbeat renewing the head lease strands S's expired lease behind it. */
    @Test
    void leasesAreNotLinearizableWithTheHeadOfLineReaper() {
        LincheckResult result = AggregatorLinearizability.check(Mode.LEASES,
                FixSet.all().without(Fix.REAP_EVERY_EXPIRED_LEASE), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertTrue(result.failed(), "S is released a poll late behind the renewed R: " + result.figures());
    }

    /** #53903 off: rank 1's only report of R is absorbed by the extra-save count; no collect ever reports R. */
    @Test
    void replicatedPcpRanksAreNotLinearizableWithout53903() {
        LincheckResult result = AggregatorLinearizability.check(Mode.PCP,
                FixSet.all().without(Fix.PCP_REPLICA_REPORTS_SENT), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertTrue(result.failed(), "R is never reported once its READ and both stores completed: " + result.figures());
    }

    /** #47046 off (vLLM main): the fence misses the non-chosen child's block; the store copies R's KV as R2's. */
    @Test
    void aNonChosenBlockIsNotLinearizableWithout47046() {
        LincheckResult result = AggregatorLinearizability.check(Mode.FENCE,
                FixSet.all().without(Fix.OFFLOAD_FENCE_NON_CHOSEN_BLOCKS), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertTrue(result.failed(), "NIXL's READ lands before the store's copy: " + result.figures());
    }

    /** #47046 without #46865: the offloader is handed no blocks at all, so the fence still misses them. */
    @Test
    void theFenceFixNeedsTheRealBlocksOf46865() {
        LincheckResult result = AggregatorLinearizability.check(Mode.FENCE,
                FixSet.all().without(Fix.NON_CHOSEN_REAL_BLOCKS), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertTrue(result.failed(), "empty blocks reach no fence: " + result.figures());
    }

    /** Before #56104 the push side reported every completed push: linearizable without #58188. */
    @Test
    void aPushIsLinearizableBeforeTheHandleRework() {
        LincheckResult result = AggregatorLinearizability.check(Mode.PUSH, FixSet.all().without(Fix.PUSH_SEND_REPORTED_PER_DIRECTION)
                .without(Fix.DEFER_RECV_FAILURE_UNTIL_HANDLES_STOP), AggregatorLinearizability.INVOCATIONS_PER_MODE);
        assertFalse(result.failed(), result.report());
    }

    /** With every fix on, the CONNECTOR check's budget runs every order (by step name) of each set-up's steps. */
    @Test
    void aCleanRunExploresEveryStepOrder() {
        for (Mode mode : Mode.values()) {
            LincheckResult result = AggregatorLinearizability.check(mode, FixSet.all(), AggregatorLinearizability.INVOCATIONS_PER_MODE);
            assertFalse(result.failed(), result.report());
            Set<String> explored = AggregatorLinearizability.exploredStepOrders();
            Set<String> all = allOrders(mode);
            assertEquals(all, explored, mode + ": " + result.figures());
            System.out.println(mode + ": " + result.figures() + ", all " + all.size() + " step orders");
        }
    }

    /** Every merge of the two threads' steps, then the post part's collect, by step name. */
    private static Set<String> allOrders(Mode mode) {
        String collect = step("get_finished");
        List<String> t1 = switch (mode) {
            case SAVES -> List.of(step("request_finished"), step("child 0 completes"), collect);
            case LOADS -> List.of(step("child 0 completes"), collect);
            case ABORTED_LOAD -> List.of(step("request_finished"), step("child 1 completes"), collect);
            case HANDLES, PUSH -> List.of(step("handle 0 ends"), collect);
            case NOTIFY -> List.of(step("request_finished"), collect);
            case LEASES -> List.of(step("HB:R arrives"), collect);
            case PCP -> List.of(step("child 0 completes"), collect);
            case FENCE -> List.of(step("store copy lands"), collect);
        };
        List<String> t2 = switch (mode) {
            case ABORTED_LOAD -> List.of(step("child 0 completes"), collect);
            case HANDLES, PUSH -> List.of(step("handle 1 ends"), collect);
            case NOTIFY -> List.of(step("handshake fails"), collect);
            case LEASES -> List.of(collect, collect);
            case PCP -> List.of(step("handle 0 ends"), step("handle 1 ends"));
            case FENCE -> List.of(step("child 0 completes"), collect);
            default -> List.of(step("child 1 completes"), collect);
        };
        Set<String> orders = new HashSet<>();
        merge(t1, t2, new ArrayList<>(), orders, collect);
        return orders;
    }

    private static void merge(List<String> a, List<String> b, List<String> prefix, Set<String> out, String post) {
        if (a.isEmpty() && b.isEmpty()) {
            List<String> order = new ArrayList<>(prefix);
            order.add(post);
            out.add(String.join(" > ", order));
            return;
        }
        for (List<String> from : List.of(a, b)) {
            if (!from.isEmpty()) {
                prefix.add(from.get(0));
                merge(from == a ? a.subList(1, a.size()) : a, from == b ? b.subList(1, b.size()) : b, prefix, out, post);
                prefix.remove(prefix.size() - 1);
            }
        }
    }

    /** A step log entry: the operation's coroutine runs one step named after it. */
    private static String step(String name) {
        return name + ": " + name;
    }
}
