package vllmrace.model.sched;

import java.util.List;
import vllmrace.model.detect.ViolationLog;
import vllmrace.model.fix.FixSet;

/**
 * Broken-model states no path of the model reaches, for the detectors that guard against them (their own tests):
 * a request finished without {@code _free_request}, and {@code _free_blocks} run twice.
 */
public final class SchedulerSeams {
    private SchedulerSeams() {
    }

    /** SC1's converse: a request is marked finished and never freed. */
    public static ViolationLog finishedWithoutFreeRequest() {
        ViolationLog log = new ViolationLog();
        Scheduler s = new Scheduler(FixSet.all(), log);
        Request r = new Request("R", 1, 4);
        s.addRequest(r);
        r.setStatus(RequestStatus.FINISHED_STOPPED);
        s.checkQuiescence();
        return log;
    }

    /** SC2: {@code _free_blocks} for a request already deleted from {@code requests}. */
    public static ViolationLog freeBlocksTwice() {
        ViolationLog log = new ViolationLog();
        Scheduler s = new Scheduler(FixSet.all(), log);
        s.addRequest(new Request("R", 1, 4));
        s.finishRequests(List.of("R"), RequestStatus.FINISHED_ABORTED);
        Request gone = new Request("R", 1, 4);
        gone.setStatus(RequestStatus.FINISHED_ABORTED);
        s.freeBlocks(gone);
        return log;
    }
}
