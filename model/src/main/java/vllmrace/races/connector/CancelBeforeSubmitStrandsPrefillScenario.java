package vllmrace.races.connector;

import static vllmrace.model.sched.RequestStatus.FINISHED_LENGTH_CAPPED;

import java.util.List;
import vllmrace.model.asyncio.Coroutine;
import vllmrace.model.connector.multi.NixlPullProducer;
import vllmrace.model.deploy.Configuration;
import vllmrace.model.detect.ViolationKind;
import vllmrace.model.fix.FixSet;
import vllmrace.model.frontend.RemotePrefillStream;
import vllmrace.races.Clean;
import vllmrace.races.Ending;
import vllmrace.races.Params;
import vllmrace.races.RaceOutcome;
import vllmrace.races.RigScenario;
import vllmrace.races.Violating;

/**
 * CancelBeforeSubmitStrandsPrefill: the client disconnects from the decode instance while {@code AsyncLLM.generate} is
 * still inside {@code add_request} (before the request reached EngineCore); the cancellation handler sees {@code q is None}
 * and sends nothing, so the prefill side holds the request's blocks until its lease timeout.
 *
 * <p><b>Upstream.</b> Issue #50425 (open; Mooncake), no PR. Mooncake's P side delay-frees a finished request's blocks
 * ({@code request_finished}: {@code _reqs_need_send}) and its worker expires them after
 * {@code VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT} (480 s); D releases them by pulling, or by an empty pull from its
 * {@code request_finished} when it aborts an admitted request before scheduling it; #41269 (merged) sends
 * {@code notify_kv_transfer_request_rejected} for requests D rejects before admission. For a streaming response the
 * serving wrapper hands ownership over when {@code create_*} returns the generator, and async_llm.py@00080ee1
 * {@code generate} adds the request only when the stream is iterated; {@code except (asyncio.CancelledError,
 * GeneratorExit): if q is not None: await self.abort(q.request_id, internal=True)}: with {@code q} None nothing is sent.
 * The window is connector-agnostic; the model's P side is the suite's NIXL pull producer, whose lease stands for the
 * Mooncake timeout and whose notification queue for D's (empty) pull. The suite's proposal
 * ({@code NOTIFY_REJECT_ON_PRE_ADD_CANCEL}) sends the rejection notice from that handler.
 *
 * <p><b>Set-up and actors.</b> The prefill engine (pool of one block, lease 8 polls) finished R and holds its block for
 * the decode side; R2 waits for the block. Actor 1: the decode side's {@code generate()} for R: {@code add_request}'s awaits
 * ({@code get_supported_tasks}, {@code process_inputs_async}), then {@code output_processor.add_request} and the ADD.
 * Actor 2: the client disconnects ({@code task.cancel()}). Arbiter: the decode task's next turn (its {@code except}
 * handler, or its EngineCore admitting R and pulling), three prefill busy-loop iterations, CN4; then the prefill side runs
 * to quiescence (the lease expires if nothing released it).
 *
 * <pre>
 *   actor 1: decode generate(R)                     actor 2: client
 *   1. add_request: await get_supported_tasks /
 *      process_inputs_async  ~suspends~
 *                                                   2. disconnect: task.cancel()
 *   3. CancelledError at the await: q is None:
 *      no abort, no notice
 *   arbiter: P holds R's block for a decode request that no longer exists; R2 waits for the 480 s timeout
 * </pre>
 *
 * <p>Generate first, the request reached EngineCore: the cancellation aborts it and the empty pull releases P. The window
 * is the disconnect landing before the ADD.
 *
 * <p><b>Scheduler.</b> Occurs under both scheduler classes: the window is in the decode side's frontend.
 *
 * <p><b>Invariant</b> (CN4 of lifecycle §5): the prefill side holds a finished request's blocks for a remote read only
 * while a decode request for it exists or can come to exist.
 *
 * <p><b>Verdicts.</b> Reported ({@code NOTIFY_REJECT_ON_PRE_ADD_CANCEL} off): the disconnect before the ADD strands the
 * block. Fixed: never. vLLM main: racy (#50425 is open). Limit: the decode instance is modelled only as far as P sees it
 * (its admission pulls, its abort or rejection releases).
 */
public final class CancelBeforeSubmitStrandsPrefillScenario extends RigScenario<ConnectorRig> {
    /** The prefill side's lease in worker polls: longer than the arbiter's iterations before CN4 is checked. */
    static final int LEASE_POLLS = 8;
    private static final int ITERATIONS_BEFORE_CHECK = 3;

    /** How one run ended. */
    public enum Outcome implements RaceOutcome {
        @Clean("the decode side pulled R's block, or released it (its abort's empty pull, the rejection notice): R2 got the "
                + "block without waiting for the lease") RELEASED,
        @Violating(value = "the client disconnected before generate() added R: nothing told the prefill side, which holds R's "
                + "block until the lease timeout", detectors = {ViolationKind.PREFILL_BLOCKS_STRANDED}) STRANDED;
    }

    private final NixlPullProducer nixl;
    private final RemotePrefillStream stream;

    /** The scenario at one point of its family: {@code maxTokens}, R2's (default 1); {@code priorUse} 1: an earlier R first. */
    public CancelBeforeSubmitStrandsPrefillScenario(FixSet fixes, Configuration config, Params p) {
        this(new NixlPullProducer[1], fixes, config, p);
    }

    private CancelBeforeSubmitStrandsPrefillScenario(NixlPullProducer[] n, FixSet fixes, Configuration config, Params p) {
        super(new ConnectorRig(fixes, config, 1, kv -> List.of(n[0] = new NixlPullProducer("NixlConnector", kv, fixes, LEASE_POLLS))), p);
        nixl = n[0];
        LeaseExpiredReadAfterFreeScenario.finishAndLease(rig, nixl, p);
        stream = new RemotePrefillStream(fixes, REQUEST_ID, nixl::remoteRead, nixl::releaseNotice);
        Coroutine<Void> generate = Coroutine.builder(rig.busyLoopEvents(), "decode side: generate(R)")
                .step("AsyncLLM.add_request: await get_supported_tasks / process_inputs_async", stream::awaitInputs)
                .step("OutputProcessor.add_request + EngineCoreClient.add_request_async", stream::addRequest)
                .build();
        Coroutine<Void> disconnect = Coroutine.builder(rig.busyLoopEvents(), "client")
                .step("disconnect: generate task.cancel()", stream::cancel)
                .build();
        actors(generate, disconnect);
    }

    @Override
    protected void settle() {
        stream.deliverCancellation();
        stream.admitAndPull();
        for (int i = 0; i < ITERATIONS_BEFORE_CHECK; i++) {
            rig.runBusyLoopOnce();
        }
        nixl.checkStranded(REQUEST_ID, stream.alive()); // CN4; then only the lease's expiry frees them
        super.settle();
    }

    @Override
    protected List<Ending> endings() {
        return List.of(ending(Outcome.RELEASED).and(finished(REQUEST_ID, FINISHED_LENGTH_CAPPED), finished(OTHER_REQUEST_ID, FINISHED_LENGTH_CAPPED)));
    }
}
