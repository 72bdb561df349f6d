package vllmrace.lincheck.connector;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import vllmrace.lincheck.verdict.LincheckResult;
import vllmrace.lincheck.verdict.LincheckRun;
import vllmrace.lincheck.verdict.RunRecorder;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.asyncio.EventLoop;
import vllmrace.model.asyncio.StepLog;
import vllmrace.model.connector.KvConnectorOutput;
import vllmrace.model.connector.UnknownTransferException;
import vllmrace.model.connector.multi.ChildConnector;
import vllmrace.model.connector.multi.FencedOffloadingConnector;
import vllmrace.model.connector.multi.KvOutputAggregator;
import vllmrace.model.connector.multi.LmCacheConnector;
import vllmrace.model.connector.multi.MultiConnector;
import vllmrace.model.connector.multi.NixlDecodeConnector;
import vllmrace.model.connector.multi.NixlPullProducer;
import vllmrace.model.connector.multi.OffloadingConnector;
import vllmrace.model.connector.multi.NixlPushProducer;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.fix.FixSet;
import vllmrace.model.kv.BlockPool;
import vllmrace.model.kv.KvCacheManager;
import vllmrace.model.sched.Request;

/**
 * Linearizability of the connector aggregator's operations (MultiConnector + KvOutputAggregator, world size 1) against a
 * plain sequential specification in which request R's transfer completes exactly once. Operations: a child reports a
 * completion ({@code childReports(i)}), the worker collects {@code get_finished} ({@code collect()}), the scheduler side
 * calls {@code request_finished} ({@code requestFinished()}). Every operation runs as one step of a coroutine on one event
 * loop (Lincheck treats {@code Coroutine.runNextStep} as atomic).
 *
 * <p>Two set-ups. {@link Mode#SAVES}: two async-saving children; {@code requestFinished} starts both saves. Spec: R is
 * reported (as finished_sending) once, by the first collect after both saves completed. {@link Mode#LOADS}: a NIXL and an
 * LMCache child both loading R (seed 003). Spec: R is reported (as finished_recving) once, after both loads completed —
 * upstream's plain union breaks it (LateLoadCompletionUnion); {@code MULTI_CONNECTOR_LOAD_DEDUP} restores it.
 * {@link Mode#ABORTED_LOAD} (#46240): a NIXL child loading R and an LMCache child offloading every finished request;
 * {@code requestFinished} is R's abort. Spec: an abort before R's load completion was delivered ends R with that one
 * recv; an abort after it starts one save, reported once as a send. Upstream starts the save next to the pending load
 * (RecvAndSendForAbortedLoad); {@code NO_SAVE_WHILE_LOADING} restores it. Every collect hands its output to the
 * scheduler side ({@code update_connector_output}), as the scheduler does. {@link Mode#HANDLES} (#54518, #56104): a NIXL
 * child pulling R over two handles (two remote TP ranks); handle 0 fails, handle 1 completes. Spec: R is reported once,
 * with its blocks invalid, by the first collect after both handles stopped (a handle's posted writes cannot be
 * aborted, so nothing may free the blocks before); exactly once per direction means here one finished_recving per pull,
 * whatever number of handles it has. Upstream before #56104 reports the failure while handle 1 still writes
 * (SiblingHandleWritesAfterFailure), and before #54518 the second report kills the worker (FailedRecvReportedTwice).
 * {@link Mode#PUSH} (#58188): the prefill side of NIXL push mode; R finished, its blocks leased and its KV written to two
 * decode ranks by one WRITE handle each, both of which complete. Spec: R is reported (as finished_sending) once, by the
 * first collect after both WRITEs completed; exactly once per direction means one finished_sending per push, however
 * many handles, and no finished_recving on the side that only sends. Upstream after #56104 drops it (the lease outlasts
 * the check; PushSendNeverReported); {@code PUSH_SEND_REPORTED_PER_DIRECTION} restores it.
 * {@link Mode#NOTIFY} (#57570): a NIXL child whose R is aborted before it was scheduled ({@code requestFinished}: an
 * empty receive, only to tell the prefill side to free its KV), the handshake that notification needs failing
 * ({@code handshakeFails}). Spec: a notification-only entry is never reported, in either direction. Upstream before
 * #57570 reports R's failed receive (NotifOnlyFailedRecvForRemoved); {@code NOTIF_ONLY_NOT_RECV_TRACKED} restores it.
 * {@link Mode#LEASES} (#58222): the prefill side holding R's and S's blocks under leases of 3 worker polls, granted in
 * that order; R's decode side heartbeats ({@code heartbeat}); each collect is one poll. Spec: a lease is released
 * (finished_sending) at the first poll at or after its expiry, a heartbeat handled at a poll moving R's to
 * {@code max(old, poll + 2)}; S, never renewed, is released at poll 3 whatever R does. Upstream's reaper stops at a
 * renewed R (LeaseReaperHeadOfLine); {@code REAP_EVERY_EXPIRED_LEASE} restores it.
 * {@link Mode#PCP} (#53903): the prefill side on two replicated PCP ranks (world size 2), a MultiConnector of a NIXL
 * pull producer and an offloader; R finished, leased by NIXL and being stored by the offloader on each rank. Operations:
 * the decode side's READ of R ({@code childReports(0)}), rank {@code i}'s store completing ({@code handleEnds(i)}). Spec:
 * R is reported (as finished_sending) once, by the first collect after the READ and both stores completed; exactly once
 * per direction means here one finished_sending per request, however many ranks count it. Upstream between #52779 and
 * #53903 never reports it (ExtraSaveCountNeverDrained); {@code PCP_REPLICA_REPORTS_SENT} restores it.
 * {@link Mode#FENCE} (#46951): a NIXL child and the job-based offloader; R2 finished with a store job pending over its
 * blocks, which were freed; R got one of them, NIXL was chosen and its READ started, the offloader was handed the block
 * with 0 tokens, and the step's fence ran. Operations: the store job's copy lands ({@code storeLands}), NIXL's READ
 * completes ({@code childReports(0)}). Spec: the store copies R2's own KV, and R is reported (as finished_recving) once,
 * by the first collect after its READ. Upstream's fence misses the block (NonChosenChildBlindToLoad);
 * {@code OFFLOAD_FENCE_NON_CHOSEN_BLOCKS} restores it.
 * {@link #check(FixSet)}, the suite's CONNECTOR linearizability check, model-checks the nine set-ups.
 */
public class AggregatorLinearizability {
    /** Which aggregator operation set is checked. */
    public enum Mode { SAVES, LOADS, ABORTED_LOAD, HANDLES, PUSH, NOTIFY, LEASES, PCP, FENCE }

    /**
     * Invocations per set-up in {@link #check(FixSet)} (times {@code vllmrace.lincheck.scale}). Measured with every fix
     * on: 100 invocations ran every distinct order of the operations' atomic steps, by step name (LOADS: 4, already
     * within 10 invocations; SAVES: 7), as 500 did; Lincheck keeps re-exploring them up to its budget.
     */
    public static final int INVOCATIONS_PER_MODE = 100;

    private static volatile Mode mode;
    private static volatile FixSet fixes;

    private final EventLoop loop = new EventLoop(new StepLog());
    private final ViolationLog log = new ViolationLog();
    private final KvCacheManager kv = new KvCacheManager(new BlockPool(2, log), vllmrace.model.EngineProcess.BLOCK_SIZE, log);
    private final Request request;
    private final List<ChildConnector> children;
    private final MultiConnector multi;
    private final KvOutputAggregator aggregator;
    private final Set<String> finishedReqIds = new java.util.HashSet<>();

    public AggregatorLinearizability() {
        RunRecorder.countInvocation();
        Explored.add(loop.stepLog());
        kv.allocateSlots("R", 4);
        request = mode == Mode.PUSH || mode == Mode.LEASES || mode == Mode.PCP ? Request.finished("R", 1, 3, 1, vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED)
                : new Request("R", 1, 4, 1);
        if (mode == Mode.FENCE) {
            NixlDecodeConnector nixl = new NixlDecodeConnector("NixlConnector", kv, fixes);
            nixl.remotePrefill("R", 4);
            children = List.of(nixl, new FencedOffloadingConnector("OffloadingConnector", kv, fixes));
        } else if (mode == Mode.PCP) {
            children = List.of(new NixlPullProducer("NixlConnector", kv, fixes, 8, false, 2), new OffloadingConnector("OffloadingConnector", kv, 2));
        } else if (mode == Mode.PUSH) {
            NixlPushProducer push = new NixlPushProducer("NixlPushConnector", kv, fixes);
            children = List.of(push);
        } else if (mode == Mode.LEASES) {
            children = List.of(new NixlPushProducer("NixlPushConnector", kv, fixes, Specification.LEASE_POLLS));
        } else if (mode == Mode.NOTIFY) {
            NixlDecodeConnector nixl = new NixlDecodeConnector("NixlConnector", kv, fixes);
            nixl.remotePrefill("R", 4);
            nixl.handshakeWillFail("R"); // no agent for R's prefill engine yet; its handshake fails
            children = List.of(nixl);
        } else if (mode == Mode.SAVES) {
            children = List.of(new LmCacheConnector("LMCacheMPConnector", kv, true, fixes, Configuration.DEFAULT),
                    LmCacheConnector.offloader("OffloadingConnector", kv, fixes, Configuration.DEFAULT));
        } else if (mode == Mode.HANDLES) {
            NixlDecodeConnector nixl = new NixlDecodeConnector("NixlConnector", kv, fixes);
            nixl.remotePrefill("R", 4, 2);
            children = List.of(nixl);
        } else if (mode == Mode.ABORTED_LOAD) {
            NixlDecodeConnector nixl = new NixlDecodeConnector("NixlConnector", kv, fixes);
            nixl.remotePrefill("R", 4);
            children = List.of(nixl, new LmCacheConnector("LMCacheConnectorV1 (offload)", kv, true, fixes, Configuration.DEFAULT));
        } else {
            NixlDecodeConnector nixl = new NixlDecodeConnector("NixlConnector", kv, fixes);
            // seed 003's deployment: an LMCache child that loads without being chosen (out of tree; in tree before #47505)
            LmCacheConnector lm = LmCacheConnector.outOfTree("LMCacheMPConnector", kv, false);
            nixl.remotePrefill("R", 4);
            lm.cachedPrefix("R", 4);
            children = List.of(nixl, lm);
        }
        multi = new MultiConnector(fixes, vllmrace.model.connector.KvRole.KV_BOTH, children, mode == Mode.PCP ? 2 : 1);
        aggregator = new KvOutputAggregator(multi.rankWorkers(), multi.getFinishedCount(), log, null);
        if (mode == Mode.LEASES) { // R, then S, finished and leased at poll 0
            kv.allocateSlots("S", 4);
            finishedReqIds.addAll(List.of("R", "S"));
            multi.requestFinished(request, kv.getBlockIds("R"));
            multi.requestFinished(Request.finished("S", 2, 3, 1, vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED),
                    kv.getBlockIds("S"));
        } else if (mode == Mode.FENCE) { // R2 held both blocks, finished with a store job pending, freed; R got one of them
            kv.free("R");
            kv.allocateSlots("R2", 8);
            multi.requestFinished(Request.finished("R2", 2, 7, 1, vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED), kv.getBlockIds("R2"));
            kv.free("R2");
            kv.allocateSlots("R", 4);
            multi.getNumNewMatchedTokens(request, 0);
            multi.updateStateAfterAlloc(request, kv.getBlockIds("R"), 4);
            multi.buildConnectorMeta(new vllmrace.model.sched.SchedulerOutput(1, java.util.Map.of(), Set.of()));
        } else if (mode == Mode.PCP) { // R finished: leased by NIXL, a store per rank; _extra_async_saves[R] = 1
            finishedReqIds.add("R");
            multi.requestFinished(request, kv.getBlockIds("R"));
        } else if (mode == Mode.PUSH) { // R finished and leased, D's PUSH_REG matched: one WRITE per D rank posted
            finishedReqIds.add("R");
            multi.requestFinished(request, kv.getBlockIds("R"));
            ((NixlPushProducer) children.get(0)).postWrites("R", 2);
        } else if (mode != Mode.SAVES && mode != Mode.NOTIFY) {
            multi.getNumNewMatchedTokens(request, 0);
            multi.updateStateAfterAlloc(request, kv.getBlockIds("R"), 4);
        }
    }

    static void configure(Mode mode, FixSet fixes) {
        AggregatorLinearizability.mode = Objects.requireNonNull(mode, "mode");
        AggregatorLinearizability.fixes = Objects.requireNonNull(fixes, "fixes");
    }

    private <T> T atomically(String name, Supplier<T> body) {
        Object[] result = new Object[1];
        Coroutine<Void> c = Coroutine.builder(loop, name).step(name, () -> result[0] = body.get()).build();
        c.run();
        if (c.failure() != null) {
            throw c.failure();
        }
        @SuppressWarnings("unchecked")
        T t = (T) result[0];
        return t;
    }

    /** Scheduler side: {@code request_finished(R)}; R goes into the next {@code finished_req_ids}. */
    @Operation
    public String requestFinished() {
        return atomically("request_finished", () -> {
            if (finishedReqIds.contains("R")) {
                return "already finished";
            }
            finishedReqIds.add("R");
            return multi.requestFinished(request, kv.getBlockIds("R")).delayFreeBlocks() ? "delay" : "free";
        });
    }

    /** Child {@code child} completes its transfer of R. */
    @Operation
    public String childReports(int child) {
        return atomically("child " + child + " completes", () -> {
            try {
                if (children.get(child) instanceof NixlPullProducer p) {
                    return p.remoteRead("R") ? "ok" : "declined";
                } else if (children.get(child) instanceof NixlDecodeConnector n) {
                    n.completePull("R");
                } else if (mode != Mode.LOADS) {
                    ((LmCacheConnector) children.get(child)).completeSave("R");
                } else {
                    ((LmCacheConnector) children.get(child)).completeLoad("R");
                }
                return "ok";
            } catch (UnknownTransferException e) {
                return "no transfer";
            }
        });
    }

    /**
     * NIXL handle {@code handle} of R's transfer stops. HANDLES: handle 0 of the pull fails (ERR), handle 1 completes
     * (DONE, writes the blocks). PUSH: WRITE handle {@code handle} completes (DONE, it read the blocks).
     */
    @Operation
    public String handleEnds(int handle) {
        return atomically("handle " + handle + " ends", () -> {
            if (mode == Mode.PCP) {
                try {
                    ((OffloadingConnector) children.get(1)).completeStore(handle, "R");
                    return "ok";
                } catch (UnknownTransferException e) {
                    return "no transfer";
                }
            }
            if (mode == Mode.PUSH) {
                try {
                    ((NixlPushProducer) children.get(0)).completeWrite("R", handle);
                    return "ok";
                } catch (UnknownTransferException e) {
                    return "no transfer";
                }
            }
            NixlDecodeConnector nixl = (NixlDecodeConnector) children.get(0);
            try {
                if (handle == 0) {
                    nixl.failHandle("R", 0);
                } else {
                    nixl.completeHandle("R", handle);
                }
                return "ok";
            } catch (UnknownTransferException e) {
                return "no transfer";
            }
        });
    }

    /** FENCE: the copy of R2's store job lands; returns whose KV it copied (it may have landed at the fence's wait). */
    @Operation
    public String storeLands() {
        return atomically("store copy lands", () -> {
            ((FencedOffloadingConnector) children.get(1)).storeCopyLands("R2");
            return log.has(vllmrace.model.detect.ViolationKind.STORE_READ_OF_FREED_BLOCK) ? "R's KV" : "R2's KV";
        });
    }

    /** NOTIFY: the handshake thread fails every pending handshake ({@code _handle_failed_transfer(req_id, None)}). */
    @Operation
    public String handshakeFails() {
        return atomically("handshake fails", () -> {
            ((NixlDecodeConnector) children.get(0)).failPendingHandshakes();
            return "ok";
        });
    }

    /** LEASES: R's decode side's {@code "HB:R"} reaches the worker's notification queue (handled at the next poll). */
    @Operation
    public String heartbeat() {
        return atomically("HB:R arrives", () -> {
            ((NixlPushProducer) children.get(0)).heartbeat("R");
            return "ok";
        });
    }

    /** The worker step: {@code get_finished(finished_req_ids)} aggregated; returns R if reported. */
    @Operation
    public String collect() {
        return atomically("get_finished", () -> {
            KvConnectorOutput out = aggregator.getFinished(Set.copyOf(finishedReqIds));
            multi.updateConnectorOutput(out);
            if (mode == Mode.ABORTED_LOAD) {
                return Specification.events(out.finishedRecving().contains("R"), out.finishedSending().contains("R"));
            }
            if (mode == Mode.LEASES) {
                return String.join(",", new java.util.TreeSet<>(out.finishedSending()));
            }
            if (mode == Mode.NOTIFY) {
                return Specification.events(out.finishedRecving().contains("R"), out.finishedSending().contains("R"));
            }
            if (mode == Mode.PCP) {
                return out.finishedSending().contains("R") ? "R" : "";
            }
            if (mode == Mode.PUSH) {
                return (out.finishedSending().contains("R") ? "R" : "") + (out.finishedRecving().isEmpty() ? "" : " recv");
            }
            if (mode == Mode.HANDLES) {
                String dead = log.engineDead() ? " worker dead" : "";
                return (out.finishedRecving().contains("R") ? "R" + (out.invalidBlockIds().isEmpty() ? "" : " invalid") : "") + dead;
            }
            Set<String> ids = mode == Mode.SAVES ? out.finishedSending() : out.finishedRecving();
            return ids.contains("R") ? "R" : "";
        });
    }

    /**
     * The plain sequential specification: R's transfer completes exactly once, after every child's part. With
     * ABORTED_LOAD: child 0's load completes once and is reported once (a recv); an abort before that report leaves
     * nothing to save (the recv is R's only terminal event), an abort after it starts one save (child 1), reported
     * once as a send.
     */
    public static class Specification {
        /** LEASES: {@code kv_lease_duration} in polls; a heartbeat extends to {@code poll + LEASE_POLLS * 2 / 3}. */
        static final int LEASE_POLLS = 3;
        private final Mode m = mode;
        private int poll;
        private boolean heartbeatPending;
        private final java.util.Map<String, Integer> leases = new java.util.TreeMap<>(java.util.Map.of("R", LEASE_POLLS, "S", LEASE_POLLS));
        private boolean finished;
        private final boolean[] done = new boolean[2];
        /** PCP: each rank's store of R completed (the READ is {@code done[0]}). */
        private final boolean[] storeDone = new boolean[2];
        private boolean reported;
        private boolean saveStarted;
        private boolean sendReported;

        static String events(boolean recv, boolean send) {
            return (recv ? "recv" : "") + (recv && send ? "+" : "") + (send ? "send" : "");
        }

        public String requestFinished() {
            if (finished) {
                return "already finished";
            }
            finished = true;
            if (m == Mode.NOTIFY) {
                return "free"; // an empty receive: nothing held
            }
            if (m == Mode.ABORTED_LOAD) {
                saveStarted = reported;
                return saveStarted ? "delay" : "free";
            }
            return m == Mode.SAVES ? "delay" : "free";
        }

        public String childReports(int child) {
            boolean started = switch (m) {
                case SAVES -> finished;
                case LOADS -> true;
                case PCP, FENCE -> child == 0;
                case ABORTED_LOAD -> child == 0 || saveStarted;
                case HANDLES, PUSH, NOTIFY, LEASES -> false; // handles end through handleEnds; NOTIFY and LEASES transfer nothing
            };
            if (!started || done[child]) {
                return "no transfer";
            }
            done[child] = true;
            return "ok";
        }

        public String handleEnds(int handle) {
            if (m == Mode.PCP) {
                if (storeDone[handle]) {
                    return "no transfer";
                }
                storeDone[handle] = true;
                return "ok";
            }
            if (done[handle]) {
                return "no transfer";
            }
            done[handle] = true;
            return "ok";
        }

        public String handshakeFails() {
            return "ok";
        }

        public String storeLands() {
            return "R2's KV"; // a store job copies its own request's KV
        }

        public String heartbeat() {
            heartbeatPending = true;
            return "ok";
        }

        public String collect() {
            if (m == Mode.LEASES) {
                poll++;
                if (heartbeatPending) {
                    leases.computeIfPresent("R", (k, old) -> Math.max(old, poll + LEASE_POLLS * 2 / 3));
                    heartbeatPending = false;
                }
                List<String> released = leases.entrySet().stream().filter(e -> poll >= e.getValue()).map(java.util.Map.Entry::getKey).toList();
                released.forEach(leases::remove);
                return String.join(",", released);
            }
            if (m == Mode.NOTIFY) {
                return ""; // a notification-only entry is never reported
            }
            if (m == Mode.FENCE) {
                if (done[0] && !reported) {
                    reported = true;
                    return "R";
                }
                return "";
            }
            if (m == Mode.PCP) {
                if (done[0] && storeDone[0] && storeDone[1] && !reported) {
                    reported = true;
                    return "R";
                }
                return "";
            }
            if (m == Mode.PUSH) {
                if (done[0] && done[1] && !reported) {
                    reported = true;
                    return "R";
                }
                return "";
            }
            if (m == Mode.HANDLES) {
                if (done[0] && done[1] && !reported) {
                    reported = true;
                    return "R invalid";
                }
                return "";
            }
            if (m == Mode.ABORTED_LOAD) {
                boolean recv = done[0] && !reported;
                reported |= recv;
                boolean send = saveStarted && done[1] && !sendReported;
                sendReported |= send;
                return events(recv, send);
            }
            if (done[0] && done[1] && !reported && (m != Mode.SAVES || finished)) {
                reported = true;
                return "R";
            }
            return "";
        }
    }

    /**
     * The CONNECTOR linearizability check: LOADS, then SAVES, under {@code fixes}, {@link #INVOCATIONS_PER_MODE}
     * invocations each (scaled). The set-up is chosen at construction, so each is its own Lincheck run: a failing run
     * is returned as it is (its name says which set-up); two clean runs are returned as one result over both.
     */
    public static LincheckResult check(FixSet fixes, vllmrace.races.Race focus) {
        int budget = LincheckRun.scaled(INVOCATIONS_PER_MODE);
        List<LincheckResult> runs = new java.util.ArrayList<>();
        List<Mode> modes = new java.util.ArrayList<>(List.of(Mode.LOADS, Mode.SAVES, Mode.ABORTED_LOAD, Mode.HANDLES, Mode.PUSH, Mode.NOTIFY, Mode.LEASES, Mode.PCP, Mode.FENCE));
        if (focus == vllmrace.races.Race.RecvAndSendForAbortedLoad) {
            modes.remove(Mode.ABORTED_LOAD);
            modes.add(0, Mode.ABORTED_LOAD);
        } else if (focus == vllmrace.races.Race.FailedRecvReportedTwice || focus == vllmrace.races.Race.SiblingHandleWritesAfterFailure) {
            modes.remove(Mode.HANDLES);
            modes.add(0, Mode.HANDLES);
        } else if (focus == vllmrace.races.Race.PushSendNeverReported) {
            modes.remove(Mode.PUSH);
            modes.add(0, Mode.PUSH);
        } else if (focus == vllmrace.races.Race.NotifOnlyFailedRecvForRemoved) {
            modes.remove(Mode.NOTIFY);
            modes.add(0, Mode.NOTIFY);
        } else if (focus == vllmrace.races.Race.LeaseReaperHeadOfLine) {
            modes.remove(Mode.LEASES);
            modes.add(0, Mode.LEASES);
        } else if (focus == vllmrace.races.Race.ExtraSaveCountNeverDrained) {
            modes.remove(Mode.PCP);
            modes.add(0, Mode.PCP);
        } else if (focus == vllmrace.races.Race.NonChosenChildBlindToLoad) {
            modes.remove(Mode.FENCE);
            modes.add(0, Mode.FENCE);
        }
        for (Mode m : modes) {
            LincheckResult run = check(m, fixes, budget);
            if (run.failed()) {
                return run;
            }
            runs.add(run);
        }
        return LincheckResult.allPassed("aggregator LOADS + SAVES + ABORTED_LOAD + HANDLES + PUSH + NOTIFY + LEASES + PCP + FENCE " + fixes, runs);
    }

    /**
     * The orders, by step name, in which the operations' atomic steps ran in the invocations of the last
     * {@link #check(Mode, FixSet, int)} (one string per distinct order, steps joined by {@code " > "}): shows which
     * interleavings a clean run actually explored.
     */
    public static Set<String> exploredStepOrders() {
        return Explored.orders();
    }

    /** The step log of every instance Lincheck built in the current check. Lincheck is told to ignore this class. */
    static final class Explored {
        private static final List<StepLog> LOGS = new java.util.concurrent.CopyOnWriteArrayList<>();

        private Explored() {
        }

        static void add(StepLog log) {
            LOGS.add(log);
        }

        static void reset() {
            LOGS.clear();
        }

        static Set<String> orders() {
            Set<String> orders = new java.util.TreeSet<>();
            for (StepLog log : LOGS) {
                orders.add(String.join(" > ", log.entries()));
            }
            return orders;
        }
    }

    /** Model checks {@code thread1 || thread2} (then {@code post}) of one mode under {@code fixes}. */
    public static LincheckResult check(Mode mode, FixSet fixes, int budget) {
        configure(mode, fixes);
        Class<?> c = AggregatorLinearizability.class;
        Explored.reset();
        ModelCheckingOptions options = LincheckRun.modelChecking(budget)
                .addGuarantee(ManagedStrategyGuaranteeKt.forClasses(Explored.class.getName()).allMethods().ignore())
                .iterations(0)
                .addCustomScenario(shape(mode))
                .sequentialSpecification(Specification.class);
        return LincheckRun.check("aggregator " + mode + " " + fixes, c, options, budget);
    }

    /** A set-up's scenario: its two threads, then a collect. */
    static org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario shape(Mode mode) {
        Class<?> c = AggregatorLinearizability.class;
        List<org.jetbrains.kotlinx.lincheck.Actor> t1 = switch (mode) {
            case SAVES -> List.of(LincheckRun.call(c, "requestFinished"), LincheckRun.call(c, "childReports", 0), LincheckRun.call(c, "collect"));
            case LOADS -> List.of(LincheckRun.call(c, "childReports", 0), LincheckRun.call(c, "collect"));
            // the abort, then the offload child's save (if one started), then a collect
            case ABORTED_LOAD -> List.of(LincheckRun.call(c, "requestFinished"), LincheckRun.call(c, "childReports", 1), LincheckRun.call(c, "collect"));
            case HANDLES, PUSH -> List.of(LincheckRun.call(c, "handleEnds", 0), LincheckRun.call(c, "collect"));
            case NOTIFY -> List.of(LincheckRun.call(c, "requestFinished"), LincheckRun.call(c, "collect"));
            case LEASES -> List.of(LincheckRun.call(c, "heartbeat"), LincheckRun.call(c, "collect"));
            case PCP -> List.of(LincheckRun.call(c, "childReports", 0), LincheckRun.call(c, "collect"));
            case FENCE -> List.of(LincheckRun.call(c, "storeLands"), LincheckRun.call(c, "collect"));
        };
        List<org.jetbrains.kotlinx.lincheck.Actor> t2 = switch (mode) {
            case ABORTED_LOAD -> List.of(LincheckRun.call(c, "childReports", 0), LincheckRun.call(c, "collect"));
            case HANDLES, PUSH -> List.of(LincheckRun.call(c, "handleEnds", 1), LincheckRun.call(c, "collect"));
            case NOTIFY -> List.of(LincheckRun.call(c, "handshakeFails"), LincheckRun.call(c, "collect"));
            case LEASES -> List.of(LincheckRun.call(c, "collect"), LincheckRun.call(c, "collect"));
            case PCP -> List.of(LincheckRun.call(c, "handleEnds", 0), LincheckRun.call(c, "handleEnds", 1));
            case FENCE -> List.of(LincheckRun.call(c, "childReports", 0), LincheckRun.call(c, "collect"));
            default -> List.of(LincheckRun.call(c, "childReports", 1), LincheckRun.call(c, "collect"));
        };
        return LincheckRun.scenario(List.of(), t1, t2, List.of(LincheckRun.call(c, "collect")));
    }

    /**
     * Whether a deployment runs {@link Mode#LOADS}: an LMCache child that loads without being chosen. The check's own
     * set-up (configuration null) is seed 003's, with LMCache's own MP connector; vLLM's in-tree LMCache connector
     * loads only when chosen once #47505 is in, unless the deployment runs the out-of-tree one.
     */
    public static boolean loadsDeployed(FixSet fixes, Configuration configuration) {
        return configuration == null || configuration.isOn(vllmrace.model.deploy.ConfigSwitch.OUT_OF_TREE_LMCACHE_MP)
                || !fixes.isOn(vllmrace.model.fix.Fix.LMCACHE_MP_LOAD_ONLY_WHEN_CHOSEN);
    }

    /** The set-up that holds {@code race}'s window, or null. */
    static Mode modeOf(vllmrace.races.Race race) {
        if (race == null) {
            return null;
        }
        return switch (race) {
            case LateLoadCompletionUnion -> Mode.LOADS;
            case ExtraAsyncSavesDedup -> Mode.SAVES;
            case RecvAndSendForAbortedLoad -> Mode.ABORTED_LOAD;
            case FailedRecvReportedTwice, SiblingHandleWritesAfterFailure -> Mode.HANDLES;
            case PushSendNeverReported -> Mode.PUSH;
            case NotifOnlyFailedRecvForRemoved -> Mode.NOTIFY;
            case LeaseReaperHeadOfLine -> Mode.LEASES;
            case ExtraSaveCountNeverDrained -> Mode.PCP;
            case NonChosenChildBlindToLoad -> Mode.FENCE;
            default -> null;
        };
    }

    /**
     * The bounded-exhaustive check under {@code fixes}: each set-up, its shape's calls (under a whole depth: any of
     * them on either thread, up to the depth's calls per thread), then a collect; the focus race's set-up first.
     */
    public static List<vllmrace.lincheck.prove.Proof> proofs(FixSet fixes, Configuration configuration, vllmrace.races.Race focus,
                                                             vllmrace.lincheck.prove.Depth depth) {
        List<Mode> modes = new java.util.ArrayList<>(List.of(Mode.values()));
        if (!loadsDeployed(fixes, configuration)) {
            modes.remove(Mode.LOADS);
        }
        Mode first = modeOf(focus);
        modes.sort(java.util.Comparator.comparing(m -> m != first));
        List<vllmrace.lincheck.prove.Proof> proofs = new java.util.ArrayList<>();
        for (Mode m : modes) {
            var shape = shape(m);
            List<vllmrace.lincheck.prove.Call> alphabet = new java.util.ArrayList<>(new java.util.LinkedHashSet<>(
                    vllmrace.lincheck.prove.Proof.calls(shape.getParallelExecution().stream().flatMap(List::stream).toList())));
            proofs.add(new vllmrace.lincheck.prove.Proof(new vllmrace.lincheck.prove.Subject("aggregator " + m + " " + fixes,
                    AggregatorLinearizability.class, Specification.class, () -> configure(m, fixes)),
                    List.of(vllmrace.lincheck.prove.Proof.shapeBound(m.name(), shape, alphabet, depth))));
        }
        return proofs;
    }
}
