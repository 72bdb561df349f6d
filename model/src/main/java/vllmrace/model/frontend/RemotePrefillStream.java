package vllmrace.model.frontend;

import java.util.Objects;
import java.util.function.Consumer;
import vllmrace.model.fix.Fix;
import vllmrace.model.fix.FixSet;

/**
 * Mirrors {@code vllm/v1/engine/async_llm.py}@00080ee1 {@code AsyncLLM.generate} on a decode instance, for a streaming
 * request whose {@code kv_transfer_params} carry {@code do_remote_prefill}, as far as the prefill side sees it:
 * {@code add_request} first awaits {@code get_supported_tasks()} / {@code process_inputs_async} (real suspensions), then
 * {@code output_processor.add_request} and the ADD; once EngineCore admits the request its connector pulls the blocks the
 * prefill side holds. A client disconnect cancels the task at its current await: the {@code except (CancelledError,
 * GeneratorExit)} handler runs on its next turn. With {@code q} set it aborts the request
 * ({@code abort(q.request_id, internal=True)}), and the decode connector's {@code request_finished} for a request not yet
 * scheduled sends the prefill side an empty pull; with {@code q is None} nothing is sent, unless
 * {@link Fix#NOTIFY_REJECT_ON_PRE_ADD_CANCEL} sends #41269's rejection notice. The decode instance's engine is not
 * modelled beyond that: its admission pulls, its abort releases.
 */
public final class RemotePrefillStream {
    private final FixSet fixes;
    private final String requestId;
    private final Consumer<String> pull;
    private final Consumer<String> releaseNotice;
    private boolean awaitedInputs;
    private boolean added;
    private boolean cancelled;
    private boolean handled;
    private boolean pulled;

    /**
     * @param pull          the decode EngineCore's connector pulling the prefill side's blocks of {@code requestId}
     * @param releaseNotice the decode side giving them up (an empty pull, or the rejection notice)
     */
    public RemotePrefillStream(FixSet fixes, String requestId, Consumer<String> pull, Consumer<String> releaseNotice) {
        this.fixes = Objects.requireNonNull(fixes, "fixes");
        InvalidRequestIdException.check("AsyncLLM.generate", requestId);
        this.requestId = requestId;
        this.pull = Objects.requireNonNull(pull, "pull");
        this.releaseNotice = Objects.requireNonNull(releaseNotice, "releaseNotice");
    }

    /** {@code add_request}'s awaits before the state exists; a pending cancellation raises here instead. */
    public synchronized void awaitInputs() {
        if (!deliverCancellation()) {
            awaitedInputs = true;
        }
    }

    /** {@code output_processor.add_request} and the ADD ({@code q} is set); a pending cancellation raises here instead. */
    public synchronized void addRequest() {
        if (!awaitedInputs && !cancelled) {
            throw new IllegalStateException("AsyncLLM.generate: add_request's awaits come first");
        }
        if (!deliverCancellation()) {
            added = true;
        }
    }

    /** The client disconnects: {@code task.cancel()}; the CancelledError lands at the task's current await. */
    public synchronized void cancel() {
        cancelled = true;
    }

    /**
     * The task's next turn after a cancellation: the {@code except} handler, once. Returns whether it ran (the task ends).
     */
    public synchronized boolean deliverCancellation() {
        if (!cancelled || handled) {
            return handled;
        }
        handled = true;
        if (added) {
            if (!pulled) {
                releaseNotice.accept(requestId); // abort(q.request_id): request_finished before scheduling -> empty pull
            }
        } else if (fixes.isOn(Fix.NOTIFY_REJECT_ON_PRE_ADD_CANCEL)) {
            releaseNotice.accept(requestId); // notify_kv_transfer_request_rejected -> abort_immediately -> empty pull
        }
        return true;
    }

    /** The decode EngineCore admits the added request and its connector pulls (once), unless it was cancelled. */
    public synchronized void admitAndPull() {
        if (added && !handled && !pulled) {
            pulled = true;
            pull.accept(requestId);
        }
    }

    /** Whether a decode request for the transfer exists or can still come to exist (not given up by a cancellation). */
    public synchronized boolean alive() {
        return !handled;
    }

    public synchronized boolean added() {
        return added;
    }
}
