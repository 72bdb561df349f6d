package vllmrace.lincheck.scheduler;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The sequential specification of {@link SchedulerOperations}: the request lifecycle the fixes promise, as plain
 * state, one operation at a time. A request is added, scheduled, and either finishes by length in the
 * {@code update_from_output} of the step it ran in, or is aborted: an ABORT received before that update always
 * wins (#29987), and an aborted or finished request is never processed again (#33377, #25067). Resources are
 * released exactly once: at once, or by the one transfer that still uses them: a save of r0 (reported after the
 * worker saw r0 in {@code finished_req_ids}), the load of r1 if it was aborted mid-load (#32255), but not when its
 * load had already been reported (the #32255 review). An aborted load whose push never lands is reclaimed
 * {@code RECLAIM_GRACE_STEPS} schedules later (#46289, proposed), after the remote side's lease. A resubmission is a
 * new request (#27987): nothing sent for the aborted one, its ABORT or its step's output, touches it. The busy loop
 * keeps stepping while a finished request still holds blocks (#43433). With one batch in flight (sync scheduling) a
 * scheduled step is always processed before the next schedule.
 */
public class SchedulerSpecification {
    private enum Phase { WAITING, LOADING, LOADED, RUNNING, FINISHED }

    private enum Load { NONE, IN_FLIGHT, DONE, REPORTED }

    private enum Next { INPUT, SCHEDULE, UPDATE }

    private static final class Req {
        final boolean remote;
        Phase phase = Phase.WAITING;
        boolean present = true;
        boolean hasBlocks;
        Load load = Load.NONE;
        Integer reclaimAt; // #46289: the schedule at which this load, aborted mid-load, is reclaimed

        Req(boolean remote) {
            this.remote = remote;
        }
    }

    private record Batch(List<String> ids, Set<String> finishedReqIds) {
    }

    private final int batchQueueSize = SchedulerOperations.configuration().batchQueueSize(vllmrace.races.scheduler.EngineCoreRig.BATCH_QUEUE_SIZE);
    private final int[] adds = new int[2];
    private final boolean[] abortedLatest = new boolean[2];
    private final Map<String, Req> requests = new LinkedHashMap<>();
    private final Deque<String[]> inputQueue = new ArrayDeque<>();
    private final List<String> abortsQueue = new ArrayList<>();
    private final Deque<Batch> batchQueue = new ArrayDeque<>();
    private final Set<String> finishedReqIds = new LinkedHashSet<>();
    private final Set<String> seenByWorker = new HashSet<>();
    private final Map<String, Boolean> saves = new LinkedHashMap<>(); // id -> done
    private Next next = Next.INPUT;
    private boolean blocks;
    private int schedules;

    public boolean addRequest(int id) {
        if (!(adds[id] == 0 || (abortedLatest[id] && adds[id] < SchedulerOperations.MAX_ADDS))) {
            return false;
        }
        adds[id]++;
        abortedLatest[id] = false;
        inputQueue.add(new String[] {"ADD", SchedulerOperations.label(id, adds[id]), String.valueOf(id)});
        return true;
    }

    public void abort(int id) {
        if (adds[id] > 0) {
            abortedLatest[id] = true;
            String label = SchedulerOperations.label(id, adds[id]);
            inputQueue.add(new String[] {"ABORT", label});
            abortsQueue.add(label);
        }
    }

    public String busyLoopStep() {
        switch (next) {
            case INPUT -> {
                next = Next.SCHEDULE;
                while (!inputQueue.isEmpty()) {
                    String[] message = inputQueue.poll();
                    if (message[0].equals("ADD")) {
                        requests.put(message[1], new Req(SchedulerOperations.requestId(Integer.parseInt(message[2])).equals(SchedulerOperations.REMOTE_ID)));
                    } else {
                        abortRequest(message[1]);
                    }
                }
                return "input";
            }
            case SCHEDULE -> {
                next = Next.UPDATE;
                if (requests.values().stream().noneMatch(r -> r.present) && finishedReqIds.isEmpty()) {
                    blocks = !batchQueue.isEmpty();
                    return "schedule -";
                }
                schedules++;
                List<String> ids = new ArrayList<>();
                for (Map.Entry<String, Req> e : requests.entrySet()) {
                    Req r = e.getValue();
                    if (!r.present) {
                        continue;
                    }
                    if (r.phase == Phase.WAITING && r.remote) {
                        r.phase = Phase.LOADING;
                        r.hasBlocks = true;
                        r.load = Load.IN_FLIGHT;
                    } else if (r.phase == Phase.WAITING || r.phase == Phase.LOADED) {
                        r.phase = Phase.RUNNING;
                        r.hasBlocks = true;
                        ids.add(e.getKey());
                    }
                }
                batchQueue.addFirst(new Batch(ids, new LinkedHashSet<>(finishedReqIds)));
                finishedReqIds.clear();
                blocks = !(!ids.isEmpty() && batchQueue.size() < batchQueueSize);
                return "schedule " + new TreeSet<>(ids);
            }
            default -> {
                next = Next.INPUT;
                if (!blocks) {
                    return "update -";
                }
                Batch batch = batchQueue.pollLast();
                // the worker's get_finished for this step
                seenByWorker.addAll(batch.finishedReqIds());
                List<Req> recved = new ArrayList<>();
                for (Req r : requests.values()) {
                    if (r.load == Load.DONE) {
                        r.load = Load.REPORTED;
                        recved.add(r);
                    }
                }
                List<String> sent = new ArrayList<>();
                for (Map.Entry<String, Boolean> save : saves.entrySet()) {
                    if (save.getValue() && seenByWorker.contains(save.getKey())) {
                        sent.add(save.getKey());
                    }
                }
                sent.forEach(saves::remove);
                // _process_aborts_queue, then update_from_output
                abortsQueue.forEach(this::abortRequest);
                abortsQueue.clear();
                TreeSet<String> finished = new TreeSet<>();
                for (String id : batch.ids()) {
                    Req r = requests.get(id);
                    if (r.present && r.phase == Phase.RUNNING) {
                        r.phase = Phase.FINISHED;
                        finished.add(id + ":length");
                        freeRequest(id, r, false);
                    }
                }
                for (Req r : recved) {
                    if (r.phase == Phase.LOADING) {
                        r.phase = Phase.LOADED;
                    } else if (r.phase == Phase.FINISHED) {
                        r.present = false;
                        r.reclaimAt = null;
                    }
                }
                sent.forEach(id -> requests.get(id).present = false);
                for (Req r : requests.values()) {
                    if (r.reclaimAt != null && r.reclaimAt <= schedules) {
                        // the grace outlasts the remote side's lease: its push will not land; the blocks come back
                        r.present = false;
                        r.load = Load.NONE;
                        r.reclaimAt = null;
                    }
                }
                return "update " + finished;
            }
        }
    }

    public void transfersComplete() {
        for (Req r : requests.values()) {
            if (r.load == Load.IN_FLIGHT) {
                r.load = Load.DONE;
            }
        }
        saves.replaceAll((id, done) -> true);
    }

    /** An abort wins over everything but an earlier finish; an aborted load keeps its blocks until reported. */
    private void abortRequest(String id) {
        Req r = requests.get(id);
        if (r == null || !r.present || r.phase == Phase.FINISHED) {
            return;
        }
        boolean loadStillWriting = r.phase == Phase.LOADING;
        r.phase = Phase.FINISHED;
        freeRequest(id, r, loadStillWriting);
        if (loadStillWriting) {
            r.reclaimAt = schedules + vllmrace.model.sched.Scheduler.RECLAIM_GRACE_STEPS;
        }
    }

    /** Released at once, unless r0's blocks are being saved or r1's load still writes them. */
    private void freeRequest(String id, Req r, boolean loadStillWriting) {
        finishedReqIds.add(id);
        boolean saving = !r.remote && r.hasBlocks;
        if (saving) {
            saves.put(id, false);
        }
        if (!(saving || loadStillWriting)) {
            r.present = false;
        }
    }
}
